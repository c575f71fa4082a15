/// What JSON text holds as it is: the one rule the scanner (``JSONScanner``) and the reply
/// templates (which put tokens into serialized text) share.
public enum JSONText {
    /// Whether the JSON string of `bytes` is the bytes themselves in quotes: none is a quote, a
    /// backslash, a control byte (what jansson's compact output escapes) or non-ASCII (left out
    /// so that eight bytes are checked at a time).
    public static func isVerbatim(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let position = plainWords(base, from: 0, end: bytes.count)
        return bytes[position...].allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != 0x22 && $0 != 0x5C }
    }

    /// The position after the run of whole 8-byte words from `start` (before `end`) that
    /// ``isPlain(_:)`` accepts: where a string's scan goes on byte by byte.
    static func plainWords(_ base: UnsafePointer<UInt8>, from start: Int, end: Int) -> Int {
        var position = start
        while end - position >= 8, isPlain(UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)) {
            position += 8
        }
        return position
    }

    /// Whether none of the 8 bytes is a quote, a backslash, a control byte or non-ASCII.
    static func isPlain(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let control = (word &- ones &* 0x20) & ~word
        let found = control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | word
        return found & (ones &* 0x80) == 0
    }
}
