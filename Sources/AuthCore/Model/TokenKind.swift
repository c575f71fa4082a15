/// The kinds of token a request may ask for. Each ``Backend`` serves some of them
/// (``Backend/servedKinds``); ``PublicClientApplication`` refuses the others by name
/// (``AuthError/Kind/tokenKindNotServed``) before any request is made. A new kind
/// (proof-of-possession, next) is a case here, a case of ``RequestedToken`` carrying what it
/// needs, and each backend saying whether it serves it in ``Backend/serves(_:)`` (exhaustive).
public enum TokenKind: String, Sendable, CaseIterable {
    /// An OAuth bearer access token.
    case bearer
    /// An OpenSSH user certificate for a public key (`token_type=ssh-cert`).
    case sshCertificate
}

/// What a token request asks for: its ``TokenKind`` and what that kind needs.
public enum RequestedToken: Sendable, Hashable {
    case bearer
    /// An SSH certificate for this key instead of a bearer token, cached under the key's id.
    case sshCertificate(SSHKeyBinding)

    /// The kind asked for.
    public var kind: TokenKind {
        switch self {
        case .bearer: .bearer
        case .sshCertificate: .sshCertificate
        }
    }

    /// The key of an SSH certificate request; `nil` for any other kind.
    public var sshKey: SSHKeyBinding? {
        if case .sshCertificate(let key) = self { return key }
        return nil
    }

    /// `.sshCertificate(key)`, or `.bearer` without a key.
    public init(sshKey: SSHKeyBinding?) {
        self = sshKey.map(RequestedToken.sshCertificate) ?? .bearer
    }
}
