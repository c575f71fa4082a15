import JSON
import JSONRPC
import Sidecar

/// Sign-in failures that need more than the service's words.
enum SignInFailure {
    /// The failure for a device code sign-in the tenant refuses (-51018 `deviceCodeBlocked`, or
    /// an engine that still answers the service's AADSTS53003/AADSTS50005 as they came), in one
    /// line naming the ways that work; nil for any other error.
    static func deviceCodeRefused(_ error: RPCError, host: String, port: Int? = nil) -> VerbFailure? {
        let port = port ?? 8400
        let codes = (error.data["errorCodes"]?.arrayValue ?? []).compactMap(\.intValue).map(Int.init)
        let text = error.message + " " + (error.data["oauthErrorDescription"]?.stringValue ?? "")
        let service = AuthErrorMapping.deviceCodeRefusals.first { codes.contains($0) || text.contains("AADSTS\($0)") }
        guard error.code == AuthErrorMapping.deviceCodeBlockedCode || service != nil else { return nil }
        return VerbFailure(
            message: "the tenant blocks sign-in with a device code (AADSTS\(service ?? 53003): Conditional Access). "
                + "Sign in another way: 'auth-sidecar login --paste' (open the URL in any browser, then paste back the address "
                + "it ends on), or 'auth-sidecar login --browser --redirect-port \(port)' after "
                + "'ssh -L \(port):127.0.0.1:\(port) \(host)' from the machine with the browser, or forward an agent "
                + "that is signed in there (agent forwarding)")
    }
}
