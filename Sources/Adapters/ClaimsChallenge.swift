/// A claims challenge as clients pass it on (`az --claims-challenge`, `auth-sidecar login
/// --claims-challenge`, azd's `claims`): the one rule that reads it.
public enum ClaimsChallenge {
    /// The claims JSON of a `--claims-challenge`: base64 (standard or URL-safe, padded or not)
    /// of a JSON object, as azure-identity and the WWW-Authenticate header carry it; JSON
    /// given as is is taken too. Nil when it is neither.
    public static func claims(fromChallenge challenge: String) -> String? {
        if challenge.hasPrefix("{") { return challenge }
        guard let bytes = Base64.decode(challenge), let text = String(validating: bytes, as: UTF8.self), text.hasPrefix("{") else {
            return nil
        }
        return text
    }
}

/// Base64 decoding (RFC 4648 standard and URL-safe alphabets, padding optional).
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        var bits: UInt32 = 0
        var count = 0
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            let value: UInt32
            switch scalar {
            case "A"..."Z": value = scalar.value - 65
            case "a"..."z": value = scalar.value - 97 + 26
            case "0"..."9": value = scalar.value - 48 + 52
            case "+", "-": value = 62
            case "/", "_": value = 63
            case "=": continue
            default: return nil
            }
            bits = bits << 6 | value
            count += 6
            if count >= 8 {
                count -= 8
                bytes.append(UInt8((bits >> UInt32(count)) & 0xFF))
            }
        }
        return bytes
    }
}

extension String {
    /// The string without leading and trailing spaces.
    package var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
