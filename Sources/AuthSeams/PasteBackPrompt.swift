/// Asks the user to open a sign-in URL in any browser, on any machine, and to paste back the
/// address the browser ended on (the paste-back sign-in: nothing listens on the redirect).
/// The sidecar's JSON-RPC client answers it (`pasteSignIn`), the `login --paste` verb reads
/// the address from its standard input, a test plays the user.
public protocol PasteBackPrompt: Sendable {
    /// Shows `url` and returns what the user pasted: the final `http://localhost…?code=…&state=…`
    /// address, its query, or the bare code. Throws when the user (or the client) gives up.
    func redirectedAddress(signInURL url: String) async throws -> String
}
