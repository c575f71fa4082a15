/// `application/x-www-form-urlencoded` decoding (WHATWG URL standard): `&`-separated
/// `name=value` pairs, `+` is a space, `%XX` is a byte, the result must be UTF-8.
public enum FormURLEncoding {
    /// Why a query or body could not be decoded.
    public enum DecodingError: Error, Equatable {
        /// A `%` not followed by two hex digits, or bytes that are not UTF-8.
        case malformed
        /// The same parameter appears twice (RFC 6749 §3.1: parameters must not repeat).
        case duplicate(String)
    }

    /// Decodes `text` into a dictionary; empty pairs are skipped, a pair without `=`
    /// has an empty value. Repeated names are rejected.
    public static func decode(_ text: Substring) throws(DecodingError) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let name: Substring
            let value: Substring
            if let equals = pair.firstIndex(of: "=") {
                name = pair[..<equals]
                value = pair[pair.index(after: equals)...]
            } else {
                name = pair
                value = ""
            }
            let decodedName = try decodeComponent(name)
            guard result[decodedName] == nil else { throw .duplicate(decodedName) }
            result[decodedName] = try decodeComponent(value)
        }
        return result
    }

    /// Decodes one component: `+` to space, `%XX` to a byte; the bytes must be UTF-8.
    static func decodeComponent(_ text: Substring) throws(DecodingError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    throw .malformed
                }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        guard let string = String(validating: bytes, as: UTF8.self) else { throw .malformed }
        return string
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
