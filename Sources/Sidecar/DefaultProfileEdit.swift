/// `auth-sidecar profiles use NAME` as a text edit of the configuration file: the top-level
/// `defaultProfile` member's value replaced, or the member added first in the object, and every
/// other byte (order, spacing, comments-free JSON as the user wrote it) kept.
public enum DefaultProfileEdit {
    /// The text with `defaultProfile` set to `name` (a checked profile name: no escaping
    /// needed); `nil` when the text is not an object this scanner can follow.
    public static func setting(_ name: String, in text: String) -> String? {
        var bytes = Array(text.utf8)
        let quoted = Array("\"\(name)\"".utf8)
        guard let open = bytes.firstIndex(where: { !isSpace($0) }), bytes[open] == UInt8(ascii: "{") else { return nil }
        if let value = topLevelValue(of: "defaultProfile", in: bytes, after: open) {
            bytes.replaceSubrange(value, with: quoted)
        } else {
            guard let first = bytes[(open + 1)...].firstIndex(where: { !isSpace($0) }), bytes[first] == UInt8(ascii: "\"") else { return nil }
            // The first member's own line and indentation, when the object is laid out over lines.
            let gap = bytes[(open + 1)..<first]
            let member = Array("\"defaultProfile\": ".utf8) + quoted + [UInt8(ascii: ",")]
            let insertion = gap.contains(UInt8(ascii: "\n")) ? Array(gap) + member : member + [UInt8(ascii: " ")]
            bytes.insert(contentsOf: insertion, at: open + 1)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The byte range of the value of the top-level member `key` (a string or `null`).
    private static func topLevelValue(of key: String, in bytes: [UInt8], after open: Int) -> Range<Int>? {
        let wanted = Array(key.utf8)
        var depth = 1
        var index = open + 1
        while index < bytes.count, depth > 0 {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard let end = stringEnd(bytes, from: index) else { return nil }
                if depth == 1, Array(bytes[(index + 1)..<end]) == wanted,
                    let colon = bytes[(end + 1)...].firstIndex(where: { !isSpace($0) }), bytes[colon] == UInt8(ascii: ":"),
                    let start = bytes[(colon + 1)...].firstIndex(where: { !isSpace($0) })
                {
                    if bytes[start] == UInt8(ascii: "\"") { return stringEnd(bytes, from: start).map { start..<($0 + 1) } }
                    return bytes[start...].starts(with: Array("null".utf8)) ? start..<(start + 4) : nil
                }
                index = end + 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                index += 1
            default:
                index += 1
            }
        }
        return nil
    }

    /// The index of the quote closing the string that opens at `start`.
    private static func stringEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index
            default: index += 1
            }
        }
        return nil
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
