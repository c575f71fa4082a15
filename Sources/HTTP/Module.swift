// The HTTP module; see ARCHITECTURE.md.
