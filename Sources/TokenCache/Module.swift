// The TokenCache module; see ARCHITECTURE.md.
