import FoundationEssentials

/// Base64url (RFC 4648 section 5) without padding, as JWTs, PKCE and client_info use it.
public enum Base64URL {
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text = Data(bytes).base64EncodedString()
        text.unicodeScalars.removeAll { $0 == "=" }
        return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }

    /// Decodes base64url or standard base64, padded or not (every `=` is skipped); `nil` on
    /// any other character, or a length no encoding makes (one character past a group of 4).
    /// Byte by byte: an ID token is decoded on every fresh process's first silent request.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3 / 4)
        var group: UInt32 = 0
        var count = 0
        for character in text.utf8 where character != UInt8(ascii: "=") {
            guard let value = sextet(character) else { return nil }
            group = group << 6 | UInt32(value)
            count += 1
            if count == 4 {
                bytes.append(UInt8(truncatingIfNeeded: group >> 16))
                bytes.append(UInt8(truncatingIfNeeded: group >> 8))
                bytes.append(UInt8(truncatingIfNeeded: group))
                group = 0
                count = 0
            }
        }
        switch count {
        case 0: break
        case 2: bytes.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            bytes.append(UInt8(truncatingIfNeeded: group >> 10))
            bytes.append(UInt8(truncatingIfNeeded: group >> 2))
        default: return nil
        }
        return bytes
    }

    /// The 6 bits a character of either alphabet stands for (`-`/`+` 62, `_`/`/` 63).
    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"), UInt8(ascii: "+"): 62
        case UInt8(ascii: "_"), UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
