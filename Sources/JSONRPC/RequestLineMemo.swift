import JSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Recently parsed requests, kept by their text apart from the `id` value: a line that is one
/// of them byte for byte, with only another plain id, is the same request with that id, so
/// it is not parsed again (a client sends the same `acquireTokenSilent` line again and again).
///
/// Only a line that is sure to be located is kept: a single request object of at most
/// ``maxLineLength`` bytes, without a backslash (so no escaped key can spell `id` and no
/// escaped quote hides a string's end), in which the string `"id"` occurs once (then it is the
/// top-level key), followed by a plain id. A plain id is an integer without sign or leading zero
/// of at most 15 digits, or a string of at most ``maxIDLength`` printable ASCII characters
/// other than `"` and `\`; any other id, or any other difference, takes the normal path (parse,
/// shape limits, classification) and gets what it always got. The rest of the line is the same
/// JSON with the same shape, so its size and shape limits were passed already.
///
/// Used by one thread (the server's reader).
struct RequestLineMemo {
    static let capacity = 8
    static let maxLineLength = 4096
    static let maxIDLength = 64

    /// A kept request: the text before and after its id, what it asks.
    struct Entry {
        let prefix: [UInt8]
        let suffix: [UInt8]
        let method: String
        let params: JSONValue?
    }

    private var entries: [Entry] = []
    private var next = 0

    /// The request `line` is, when it is a kept one with another plain id.
    func request(in line: [UInt8]) -> IncomingMessage? {
        guard !entries.isEmpty, line.count <= Self.maxLineLength else { return nil }
        return line.withUnsafeBufferPointer { bytes in
            for entry in entries {
                guard bytes.count > entry.prefix.count + entry.suffix.count,
                    entry.prefix.withUnsafeBufferPointer({ Self.starts(bytes, with: $0) }),
                    let (id, end) = Self.plainID(in: bytes, at: entry.prefix.count),
                    bytes.count - end == entry.suffix.count,
                    entry.suffix.withUnsafeBufferPointer({ Self.same(bytes, from: end, as: $0) })
                else { continue }
                return .request(id: id, method: entry.method, params: entry.params)
            }
            return nil
        }
    }

    /// Keeps `message`, parsed from `line`, when it is a request whose id can be located.
    mutating func remember(_ message: IncomingMessage, line: [UInt8]) {
        guard case .request(let id, let method, let params) = message, line.count <= Self.maxLineLength,
            !line.contains(UInt8(ascii: "\\")), let start = Self.idValueStart(in: line)
        else { return }
        let found = line.withUnsafeBufferPointer { Self.plainID(in: $0, at: start) }
        guard let (scanned, end) = found, scanned == id else { return }
        let entry = Entry(prefix: Array(line[..<start]), suffix: Array(line[end...]), method: method, params: params)
        if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            entries[next] = entry
            next = (next + 1) % Self.capacity
        }
    }

    /// Where the value of the only `"id"` string in `line` starts, when that string is followed by
    /// a colon (so it is the key).
    private static func idValueStart(in line: [UInt8]) -> Int? {
        let key: [UInt8] = Array(#""id""#.utf8)
        var found: Int?
        var index = 0
        while index + key.count <= line.count {
            if line[index] == key[0], line[index..<(index + key.count)].elementsEqual(key) {
                guard found == nil else { return nil }
                found = index + key.count
            }
            index += 1
        }
        guard var cursor = found else { return nil }
        while cursor < line.count, line[cursor].isJSONWhitespace { cursor += 1 }
        guard cursor < line.count, line[cursor] == UInt8(ascii: ":") else { return nil }
        cursor += 1
        while cursor < line.count, line[cursor].isJSONWhitespace { cursor += 1 }
        return cursor
    }

    /// The plain id at `start` and the index after it, or `nil` for anything else.
    static func plainID(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> (RequestID, end: Int)? {
        guard start < bytes.count else { return nil }
        let first = bytes[start]
        if first == UInt8(ascii: "\"") {
            var index = start + 1
            while index < bytes.count, index - start - 1 <= maxIDLength {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[(start + 1)..<index]), as: UTF8.self)
                    return (.string(text), index + 1)
                }
                guard byte >= 0x20, byte <= 0x7E, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }
        guard first.isDigit else { return nil }
        if first == UInt8(ascii: "0") {
            return start + 1 < bytes.count && bytes[start + 1].endsNumber ? (.number(0), start + 1) : nil
        }
        var value: Int64 = 0
        var index = start
        while index < bytes.count, bytes[index].isDigit {
            guard index - start < 15 else { return nil }
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        guard index < bytes.count, bytes[index].endsNumber else { return nil }
        return (.number(value), index)
    }

    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with prefix: UnsafeBufferPointer<UInt8>) -> Bool {
        same(bytes, from: 0, as: prefix)
    }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, as part: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, let other = part.baseAddress else { return part.isEmpty }
        return memcmp(base + start, other, part.count) == 0
    }
}

extension UInt8 {
    fileprivate var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    /// What may follow a number in a request object: whitespace, a comma or the closing brace.
    fileprivate var endsNumber: Bool { isJSONWhitespace || self == UInt8(ascii: ",") || self == UInt8(ascii: "}") }
}
