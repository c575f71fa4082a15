import Crypto

/// Proof Key for Code Exchange (RFC 7636) with the S256 method, plus the other random
/// values of an authorization request (`state`, `nonce`).
public struct PKCE: Sendable {
    public let verifier: String
    public var challenge: String { Self.challenge(for: verifier) }
    public let method = "S256"

    /// A fresh verifier: 32 random bytes, base64url (43 characters).
    public init() { verifier = Self.randomToken() }

    public init(verifier: String) { self.verifier = verifier }

    /// `BASE64URL(SHA256(ASCII(verifier)))`.
    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)))
    }

    /// 32 bytes from the system's secure random source, base64url.
    public static func randomToken(byteCount: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
