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
    /// Over the text's bytes in place: an ID token is decoded on every fresh process's first
    /// silent request.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        if let decoded = text.utf8.withContiguousStorageIfAvailable(decode(bytes:)) { return decoded }
        return Array(text.utf8).withUnsafeBufferPointer(decode(bytes:))
    }

    private static func decode(bytes input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var valid = true
        let decoded = [UInt8](unsafeUninitializedCapacity: input.count / 4 * 3 + 2) { output, written in
            var group: UInt32 = 0
            var count = 0
            var length = 0
            for character in input where character != UInt8(ascii: "=") {
                guard let value = sextet(character) else {
                    valid = false
                    return
                }
                group = group << 6 | UInt32(value)
                count += 1
                if count == 4 {
                    output[length] = UInt8(truncatingIfNeeded: group >> 16)
                    output[length + 1] = UInt8(truncatingIfNeeded: group >> 8)
                    output[length + 2] = UInt8(truncatingIfNeeded: group)
                    length += 3
                    group = 0
                    count = 0
                }
            }
            switch count {
            case 0: break
            case 2:
                output[length] = UInt8(truncatingIfNeeded: group >> 4)
                length += 1
            case 3:
                output[length] = UInt8(truncatingIfNeeded: group >> 10)
                output[length + 1] = UInt8(truncatingIfNeeded: group >> 2)
                length += 2
            default:
                valid = false
                return
            }
            written = length
        }
        return valid ? decoded : nil
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
