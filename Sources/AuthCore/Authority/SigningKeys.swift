import Crypto
import CryptoExtras
import JSON

/// An issuer's signing keys (a JWK Set, RFC 7517) as published at its `jwks_uri`.
///
/// Only what ID tokens need: RSA keys for RS256 and P-256 keys for ES256 (RFC 7518).
/// Any other key or algorithm never verifies.
public struct SigningKeys: Sendable {
    let keys: [JSONObject]

    /// Parses a JWK Set; `nil` when `json` is not one.
    public init?(_ json: JSONValue) {
        guard let keys = json["keys"]?.arrayValue else { return nil }
        self.keys = keys.compactMap(\.objectValue)
    }

    /// Whether a key named by `kid` (any key when the token names none) is known.
    public func has(kid: String?) -> Bool {
        candidates(kid).isEmpty == false
    }

    /// Whether `signature` over `signingInput` verifies with one of the keys, under `algorithm`.
    public func verify(_ signature: [UInt8], of signingInput: String, algorithm: String, kid: String?) -> Bool {
        let message = Array(signingInput.utf8)
        return candidates(kid).contains { key in
            switch (algorithm, key["kty"]?.stringValue) {
            case ("RS256", "RSA"?): Self.verifyRS256(signature, message, key)
            case ("ES256", "EC"?): Self.verifyES256(signature, message, key)
            default: false
            }
        }
    }

    private func candidates(_ kid: String?) -> [JSONObject] {
        let signing = keys.filter { ($0["use"]?.stringValue ?? "sig") == "sig" }
        guard let kid else { return signing }
        return signing.filter { $0["kid"]?.stringValue == kid }
    }

    private static func bytes(_ key: JSONObject, _ member: String) -> [UInt8]? {
        key[member]?.stringValue.flatMap(Base64URL.decode)
    }

    private static func verifyRS256(_ signature: [UInt8], _ message: [UInt8], _ key: JSONObject) -> Bool {
        guard let n = bytes(key, "n"), let e = bytes(key, "e"),
            let publicKey = try? _RSA.Signing.PublicKey(n: n, e: e)
        else { return false }
        return publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: message,
            padding: .insecurePKCS1v1_5)
    }

    private static func verifyES256(_ signature: [UInt8], _ message: [UInt8], _ key: JSONObject) -> Bool {
        guard key["crv"]?.stringValue == "P-256", let x = bytes(key, "x"), let y = bytes(key, "y"),
            x.count == 32, y.count == 32,
            let publicKey = try? P256.Signing.PublicKey(rawRepresentation: x + y),
            let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return publicKey.isValidSignature(ecdsa, for: message)
    }
}
