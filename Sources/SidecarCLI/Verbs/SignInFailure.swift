import JSON
import JSONRPC

/// Sign-in failures that need more than the service's words.
enum SignInFailure {
    /// Service codes that refuse the device code flow: AADSTS50005 (a platform Conditional
    /// Access does not allow) and AADSTS53003 (blocked by Conditional Access).
    static let deviceCodeRefusals = [50005, 53003]

    /// The failure for a device code sign-in the service refused, naming the alternatives;
    /// nil for any other error.
    static func deviceCodeRefused(_ error: RPCError, host: String, port: Int? = nil) -> VerbFailure? {
        let port = port ?? 8400
        let codes = (error.data["errorCodes"]?.arrayValue ?? []).compactMap(\.intValue).map(Int.init)
        let text = error.message + " " + (error.data["oauthErrorDescription"]?.stringValue ?? "")
        guard let code = deviceCodeRefusals.first(where: { codes.contains($0) || text.contains("AADSTS\($0)") }) else { return nil }
        return VerbFailure(
            message: "the service refused the device code sign-in (AADSTS\(code): Conditional Access does not allow it here). "
                + "Sign in with a browser instead: 'auth-sidecar login --browser --redirect-port \(port)' after "
                + "'ssh -L \(port):127.0.0.1:\(port) \(host)' from the machine with the browser, or forward an agent "
                + "that is signed in there (agent forwarding)")
    }
}
