/// The parameters the identity platform sent back to the redirect URI.
///
/// Built from the query string of a `GET` (response_mode=query) or from the
/// `application/x-www-form-urlencoded` body of a `POST` (response_mode=form_post).
/// `parameters` holds every parameter received; the named properties are shortcuts.
public struct AuthorizationResponse: Sendable, Equatable {
    /// The authorization code (`code`), to be redeemed with the PKCE verifier.
    public var code: String?
    /// The `state` echoed by the server (the listener only returns responses whose
    /// state matched the expected one).
    public var state: String?
    /// The OAuth 2.0 error (`error`), e.g. `access_denied`.
    public var error: String?
    /// `error_description`, e.g. `AADSTS65004: User declined to consent ...`.
    public var errorDescription: String?
    /// AAD's `error_subcode`, e.g. `cancel` when the user cancelled.
    public var errorSubcode: String?
    /// `client_info` (base64url JSON with `uid` and `utid`), when `client_info=1` was asked.
    public var clientInfo: String?
    /// Every parameter received, decoded (names and values).
    public var parameters: [String: String]

    /// Builds a response from decoded parameters.
    public init(parameters: [String: String]) {
        self.parameters = parameters
        code = parameters["code"]
        state = parameters["state"]
        error = parameters["error"]
        errorDescription = parameters["error_description"]
        errorSubcode = parameters["error_subcode"]
        clientInfo = parameters["client_info"]
    }

    /// True when the server reported an error instead of a code.
    public var isError: Bool { error != nil }
}

extension AuthorizationResponse: CustomStringConvertible {
    /// A description that never shows the code or client_info (safe to log).
    public var description: String {
        var parts: [String] = []
        if code != nil { parts.append("code: <redacted>") }
        if let error { parts.append("error: \(error)") }
        if let errorSubcode { parts.append("error_subcode: \(errorSubcode)") }
        parts.append("parameters: \(parameters.keys.sorted().joined(separator: ","))")
        return "AuthorizationResponse(\(parts.joined(separator: ", ")))"
    }
}
