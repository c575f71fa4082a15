// auth-sidecar: a JSON-RPC 2.0 authentication sidecar for the Microsoft identity platform.
// The command line and wiring live in SidecarCLI; see ARCHITECTURE.md.
import SidecarCLI

Launcher.main()
