// The Loopback module; see ARCHITECTURE.md.
