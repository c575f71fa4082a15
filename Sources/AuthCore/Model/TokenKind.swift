/// The kinds of token a request may ask for. Each ``Backend`` serves some of them
/// (``Backend/servedKinds``); ``PublicClientApplication`` refuses the others by name
/// (``AuthError/Kind/tokenKindNotServed``) before any request is made. A new kind
/// is a case here, a case of ``RequestedToken`` carrying what it
/// needs, and each backend saying whether it serves it in ``Backend/serves(_:)`` (exhaustive).
public enum TokenKind: String, Sendable, CaseIterable {
    /// An OAuth bearer access token.
    case bearer
    /// An OpenSSH user certificate for a public key (`token_type=ssh-cert`).
    case sshCertificate
    /// A proof-of-possession access token bound to the cache's PoP key (`token_type=pop`),
    /// sent with a signed HTTP request.
    case proofOfPossession
}

/// What a token request asks for: its ``TokenKind`` and what that kind needs.
public enum RequestedToken: Sendable, Hashable {
    case bearer
    /// An SSH certificate for this key instead of a bearer token, cached under the key's id.
    case sshCertificate(SSHKeyBinding)
    /// A proof-of-possession token bound to this key (the cache's), cached under its id.
    case proofOfPossession(PopBinding)

    /// The kind asked for.
    public var kind: TokenKind {
        switch self {
        case .bearer: .bearer
        case .sshCertificate: .sshCertificate
        case .proofOfPossession: .proofOfPossession
        }
    }

    /// The key a bound kind's token is for (what its token request adds, its cache key id);
    /// `nil` for a bearer token.
    var binding: TokenBinding? {
        switch self {
        case .bearer: nil
        case .sshCertificate(let key): .sshCertificate(key)
        case .proofOfPossession(let key): .proofOfPossession(key)
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
