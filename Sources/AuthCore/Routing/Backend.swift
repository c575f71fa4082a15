/// Who answers a ``PublicClientApplication``'s requests, decided once per call by
/// ``PublicClientApplication``'s one routing table, and the token kinds each serves.
public enum Backend: String, Sendable, CaseIterable {
    /// The engine's own flows against the identity service (the file cache, refresh tokens).
    case identityService
    /// The Linux identity broker on the session D-Bus (`broker` `auto` or `required`).
    case broker
    /// The app's own identity: client credentials with a client assertion (`clientAssertion`,
    /// CI federation).
    case appIdentity

    /// Whether this backend issues tokens of `kind`: each backend's declaration, exhaustive, so
    /// a new kind does not build until every backend says whether it serves it (a switch, not a
    /// set: this runs on the fast path of a fresh process's first token).
    public func serves(_ kind: TokenKind) -> Bool {
        switch (self, kind) {
        case (.identityService, .bearer), (.identityService, .sshCertificate), (.identityService, .proofOfPossession): true
        // The broker signs PoP requests with its own key (popParams, accessTokenType 1).
        case (.broker, .bearer), (.broker, .proofOfPossession): true
        // The broker's D-Bus API has no SSH certificate request (req_cnf, token_type).
        case (.broker, .sshCertificate): false
        case (.appIdentity, .bearer): true
        // A client-credentials exchange is for the app's bearer token only.
        case (.appIdentity, .sshCertificate), (.appIdentity, .proofOfPossession): false
        }
    }

    /// The token kinds this backend issues; any other is refused before a request is made.
    public var servedKinds: [TokenKind] { TokenKind.allCases.filter(serves) }

    /// The backend in words, for messages.
    public var displayName: String {
        switch self {
        case .identityService: "the identity service"
        case .broker: "the Linux identity broker"
        case .appIdentity: "the app identity (client assertion)"
        }
    }

    /// What a user reads when `kind` is not served: one line naming the backend and the kind.
    func refusal(_ kind: TokenKind) -> AuthError {
        let what =
            switch kind {
            case .bearer: "bearer tokens"
            case .sshCertificate: "SSH certificates"
            case .proofOfPossession: "proof-of-possession tokens"
            }
        let hint =
            switch self {
            case .broker: "; set broker \"off\" to get one from the identity service"
            case .appIdentity: "; sign in as a user (no clientAssertion) to get one"
            case .identityService: ""
            }
        var error = AuthError(.tokenKindNotServed, "\(displayName) does not issue \(what)\(hint)")
        error.backend = rawValue
        error.tokenKind = kind.rawValue
        return error
    }
}
