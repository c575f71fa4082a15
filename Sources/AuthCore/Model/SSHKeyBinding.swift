import Crypto
import JSON
import TokenCache

/// The public key an `ssh-cert` request binds its certificate to: what Entra ID is sent
/// (`req_cnf`, the key's JWK with its `kid`, and `key_id`, as `az ssh cert` sends them) and what
/// the cache keys the certificate by (MSAL's `key_id`). RSA only: Entra signs nothing else.
public struct SSHKeyBinding: Sendable, Hashable {
    /// The token type of an SSH certificate, in requests, answers and the cache.
    public static let tokenType = "ssh-cert"
    /// The certificate type of an RSA user certificate, the first word of its line.
    public static let certificateType = "ssh-rsa-cert-v01@openssh.com"

    /// The JWK's `kid`: hex SHA-256 of the base64url modulus then exponent (as `az ssh` makes it).
    public let keyId: String
    /// The key.
    public let publicKey: OpenSSHPublicKey
    /// `req_cnf`: the JWK `{"kty":"RSA","n":...,"e":...,"kid":...}` as JSON text.
    public let requestConfirmation: String

    /// The binding of an OpenSSH public key line (`ssh-rsa AAAA... comment`).
    public init(openSSH text: String) throws(OpenSSHKeyError) {
        let key = try OpenSSHPublicKey(line: text)
        publicKey = key
        let n = Base64URL.encode(key.modulus)
        let e = Base64URL.encode(key.exponent)
        keyId = SHA256.hash(data: Array((n + e).utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        let jwk: JSONValue = ["kty": "RSA", "n": .string(n), "e": .string(e), "kid": .string(keyId)]
        requestConfirmation = String(decoding: jwk.serialized(), as: UTF8.self)
    }

    /// The token request's extra fields (`token_type`, `req_cnf`, `key_id`).
    var fields: [(String, String)] {
        [("token_type", Self.tokenType), ("req_cnf", requestConfirmation), ("key_id", keyId)]
    }

    /// How long before its end a certificate is renewed: a third of its life, at most 5
    /// minutes. A cached certificate with more left than this is used as it is.
    public static func renewalMargin(lifetime: Int64) -> Int64 {
        min(300, max(lifetime, 0) / 3)
    }

    /// Whether `token` is due for renewal at `now`: an SSH certificate within its
    /// ``renewalMargin(lifetime:)`` of its end, any other token within 5 minutes of it.
    static func isDue(_ token: CachedAccessToken, at now: Int64) -> Bool {
        guard token.tokenType == tokenType else { return token.isExpired(at: now) }
        return token.isExpired(at: now, margin: renewalMargin(lifetime: token.expiresOn - token.cachedAt))
    }

    /// The certificate file's line for the base64 certificate the service sent.
    public static func certificateLine(_ certificate: String) -> String {
        certificateType + " " + certificate
    }
}
