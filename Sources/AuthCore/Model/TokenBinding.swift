/// A token bound to a key instead of a bearer token: what the token request adds, the
/// `token_type` expected back, and the key id the cache keys it by (MSAL's `key_id`, the bound
/// token's own cache entry). A bearer request has none; a bound token is never answered to a
/// bearer request, nor a bearer token to a bound one.
public enum TokenBinding: Sendable, Hashable {
    /// An OpenSSH user certificate for this public key (`token_type=ssh-cert`).
    case sshCertificate(SSHKeyBinding)
    /// A proof-of-possession access token bound to the cache's PoP key (`token_type=pop`).
    case proofOfPossession(PopBinding)

    /// The token request's extra fields.
    var fields: [(String, String)] {
        switch self {
        case .sshCertificate(let key): key.fields
        case .proofOfPossession(let key): key.fields
        }
    }

    /// The `token_type` the answer must carry, and the cache entry's.
    public var tokenType: String {
        switch self {
        case .sshCertificate: SSHKeyBinding.tokenType
        case .proofOfPossession: PopBinding.tokenType
        }
    }

    /// The key id a cached token is found by.
    public var keyId: String {
        switch self {
        case .sshCertificate(let key): key.keyId
        case .proofOfPossession(let key): key.keyId
        }
    }

    /// The SSH key, for an SSH certificate.
    var sshKey: SSHKeyBinding? {
        if case .sshCertificate(let key) = self { return key }
        return nil
    }

    /// Whether a token of `tokenType` (cached or answered) is of this binding's kind; with no
    /// binding, whether it is a bearer token.
    static func matches(_ binding: TokenBinding?, tokenType: String?) -> Bool {
        guard let binding else { return TokenResponse.isBearer(tokenType) }
        return tokenType?.lowercased() == binding.tokenType.lowercased()
    }
}

/// The PoP key a `token_type=pop` request binds its token to: `req_cnf` (base64url of
/// `{"kid":…,"xms_ksl":"sw"}`, msal-browser's shape) and the key id the cache keys it by.
public struct PopBinding: Sendable, Hashable {
    /// The token type of a proof-of-possession token, in requests, answers and the cache.
    public static let tokenType = "pop"

    /// The key's RFC 7638 thumbprint (`kid`).
    public let keyId: String
    /// `req_cnf`.
    public let requestConfirmation: String

    public init(key: PopSigningKey) {
        keyId = key.keyId
        requestConfirmation = key.requestConfirmation
    }

    private init(keyId: String, requestConfirmation: String) {
        self.keyId = keyId
        self.requestConfirmation = requestConfirmation
    }

    /// A PoP request the broker answers with its own key (`broker` `required`: the flows, which
    /// would need the cache's key, never answer it, so none is made).
    static let heldByBroker = PopBinding(keyId: "", requestConfirmation: "")

    /// The token request's extra fields (`token_type`, `req_cnf`).
    var fields: [(String, String)] { [("token_type", Self.tokenType), ("req_cnf", requestConfirmation)] }
}
