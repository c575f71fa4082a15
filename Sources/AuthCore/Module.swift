// The AuthCore module; see ARCHITECTURE.md.
