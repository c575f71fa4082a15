// auth-sidecar: a JSON-RPC 2.0 authentication sidecar for the Microsoft identity platform.
// This file only wires things together; see ARCHITECTURE.md.

AuthSidecarCommand.main()
