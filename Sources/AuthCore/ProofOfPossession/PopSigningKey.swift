import Crypto
import CryptoExtras
import FoundationEssentials
import JSON

/// The key proof-of-possession tokens are bound to: one RSA 2048 key per cache (Entra ID's PoP
/// takes RS256, as MSAL.NET and msal-browser sign), its RFC 7638 JWK thumbprint the `kid` the
/// token request names (`req_cnf`) and the token's `cnf.kid` carries.
public struct PopSigningKey: Sendable {
    private let key: _RSA.Signing.PrivateKey
    /// The public JWK's required members as `(name, value)` in RFC 7638's order (`e`, `kty`, `n`).
    public let publicMembers: [(String, String)]
    /// The RFC 7638 thumbprint: base64url of SHA-256 of the canonical public JWK.
    public let keyId: String

    /// A new key.
    public static func generate() throws -> PopSigningKey {
        try PopSigningKey(key: _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    /// The key kept as ``derRepresentation``; throws for anything that is not an RSA key of
    /// at least 2048 bits.
    public init(derRepresentation bytes: [UInt8]) throws {
        try self.init(key: _RSA.Signing.PrivateKey(derRepresentation: bytes))
    }

    private init(key: _RSA.Signing.PrivateKey) throws {
        guard key.keySizeInBits >= 2048 else { throw PopKeyError.tooShort(key.keySizeInBits) }
        self.key = key
        let numbers = try key.publicKey.getKeyPrimitives()
        publicMembers = [("e", Base64URL.encode(numbers.publicExponent)), ("kty", "RSA"), ("n", Base64URL.encode(numbers.modulus))]
        keyId = Self.thumbprint(publicMembers)
    }

    /// The private key, PKCS #1 DER: what the key file keeps, sealed under the cache's key.
    public var derRepresentation: [UInt8] { Array(key.derRepresentation) }

    /// The public JWK (`{"e":…,"kty":"RSA","n":…}`): the SHR's `cnf.jwk`.
    public var publicJWK: JSONValue {
        .object(JSONObject(publicMembers.map { ($0.0, JSONValue.string($0.1)) }))
    }

    /// `req_cnf`: base64url of `{"kid":…,"xms_ksl":"sw"}` (msal-browser's shape: the key is
    /// kept in software).
    public var requestConfirmation: String {
        let cnf: JSONValue = ["kid": .string(keyId), "xms_ksl": "sw"]
        return Base64URL.encode(cnf.serialized())
    }

    /// RS256 (RSASSA-PKCS1-v1_5 with SHA-256) over `message`.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: message, padding: .insecurePKCS1v1_5).rawRepresentation)
    }

    /// RFC 7638: the required members, lexicographic, no whitespace (their values are base64url
    /// and "RSA": nothing to escape), hashed with SHA-256, base64url.
    static func thumbprint(_ members: [(String, String)]) -> String {
        let canonical = "{" + members.map { "\"\($0.0)\":\"\($0.1)\"" }.joined(separator: ",") + "}"
        return Base64URL.encode(SHA256.hash(data: Array(canonical.utf8)))
    }
}

/// A key that cannot be the PoP signing key.
public enum PopKeyError: Error, Sendable, CustomStringConvertible {
    case tooShort(Int)

    public var description: String {
        switch self {
        case .tooShort(let bits): "the proof-of-possession key has \(bits) bits, fewer than 2048"
        }
    }
}
