import CJansson

/// A document's long string values, lifted out of the text jansson parses and put back into
/// its tree afterwards, one string made from their bytes each (``JSONTree/init(parsingObject:)``).
///
/// jansson's lexer takes about 150 instructions a byte of a string, and a token cache is
/// mostly the secrets of its tokens (an access and an ID token: 2.4 KB of a 1-account cache's
/// 5.3 KB). Lifted, jansson parses the document with those values empty: the same structure,
/// the same verdict (only the contents of strings jansson takes as they are are lifted), and
/// the tree is the same once they are back.
///
/// Lifted: string values of at least ``minimumLength`` bytes that JSON holds as they are
/// (printable ASCII, no quote or backslash: ``JSONText/isVerbatim(_:)``), in objects all the
/// way from the top, at most ``maxDepth`` levels down, under keys without escapes. The pass
/// that finds them only tells strings from what lies between them (and counts brackets);
/// jansson judges the rest.
struct LongStringLift {
    /// Shorter strings stay in the text (a token is a kilobyte or more).
    static let minimumLength = 256
    /// The depth of a token cache's secrets (section, entry, `secret`).
    static let maxDepth = 3

    /// A lifted value: the keys that lead to it, from the top, and its contents (byte ranges
    /// of the document).
    struct Lifted {
        let path: [Range<Int>]
        let contents: Range<Int>
    }

    let lifted: [Lifted]

    /// Finds the values to lift in `bytes`; `nil` when there is none (or the bytes end inside
    /// a string, which jansson then reports).
    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, bytes.count >= Self.minimumLength else { return nil }
        var found: [Lifted] = []
        // Per level (1 is the top-level object's): whether it is an object (bit `level` of
        // `objects`), and the key last read in it, when that key has no escape (else
        // ``noKey``). A bit set and plain ranges, not arrays of `Bool` and of optional ranges:
        // each of those array types was made by the runtime at a process's first cache read.
        var objects = 0
        var keys = [Range<Int>](repeating: Self.noKey, count: Self.maxDepth + 1)
        var depth = 0
        var position = 0
        while position < bytes.count {
            switch base[position] {
            case 0x22:
                guard let string = Self.string(in: bytes, at: position) else { return nil }
                position = string.contents.upperBound + 1
                while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(base[position]) { position += 1 }
                let isKey = position < bytes.count && base[position] == 0x3A
                if isKey, (1...Self.maxDepth).contains(depth) {
                    keys[depth] = string.verbatim ? string.contents : Self.noKey
                } else if !isKey, string.verbatim, string.contents.count >= Self.minimumLength,
                    (1...Self.maxDepth).contains(depth), let path = Self.path(to: depth, keys: keys, objects: objects)
                {
                    found.append(Lifted(path: path, contents: string.contents))
                }
            case 0x7B, 0x5B:
                depth += 1
                if (1...Self.maxDepth).contains(depth) {
                    if base[position] == 0x7B { objects |= 1 << depth } else { objects &= ~(1 << depth) }
                    keys[depth] = Self.noKey
                }
                position += 1
            case 0x7D, 0x5D:
                depth -= 1
                position += 1
            default:
                position += 1
            }
        }
        guard !found.isEmpty else { return nil }
        lifted = found
    }

    /// The document with the lifted values' contents left out (their quotes kept).
    func text(of bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count - lifted.reduce(0) { $0 + $1.contents.count })
        var copied = 0
        for item in lifted {
            text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<item.contents.lowerBound]))
            copied = item.contents.upperBound
        }
        text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied...]))
        return text
    }

    /// Puts the lifted values into `root`, the tree jansson parsed from ``text(of:)``; false
    /// when a value's place is not the empty string it left (not expected: parse `bytes` whole).
    func restore(into root: UnsafeMutablePointer<json_t>, from bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
            for item in lifted {
                guard let last = item.path.last else { return false }
                var container = root
                for key in item.path.dropLast() {
                    guard let child = json_object_getn(container, text + key.lowerBound, key.count),
                        cjansson_typeof(child) == JSON_OBJECT
                    else { return false }
                    container = child
                }
                guard let slot = json_object_getn(container, text + last.lowerBound, last.count),
                    cjansson_typeof(slot) == JSON_STRING, json_string_length(slot) == 0,
                    let value = json_stringn_nocheck(text + item.contents.lowerBound, item.contents.count)
                else { return false }
                guard json_object_setn_new_nocheck(container, text + last.lowerBound, last.count, value) == 0 else { return false }
            }
            return true
        }
    }

    /// A level's key when it has none that can be looked up as it is (an escape in it, or
    /// none read yet): no key's contents start before the document.
    private static let noKey = -1 ..< -1

    /// The keys leading to a value at `depth`, when every level is an object (a bit of
    /// `objects`) and its key has no escape.
    private static func path(to depth: Int, keys: [Range<Int>], objects: Int) -> [Range<Int>]? {
        var path: [Range<Int>] = []
        for level in 1...depth {
            guard objects & (1 << level) != 0, keys[level] != noKey else { return nil }
            path.append(keys[level])
        }
        return path
    }

    /// The string whose opening quote is at `start`: its contents and whether JSON holds them
    /// as they are; `nil` when the bytes end first.
    private static func string(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> (contents: Range<Int>, verbatim: Bool)? {
        guard let base = bytes.baseAddress else { return nil }
        var position = start + 1
        var verbatim = true
        while true {
            position = JSONText.plainWords(base, from: position, end: bytes.count)
            guard position < bytes.count else { return nil }
            let byte = base[position]
            if byte == 0x22 { return (start + 1..<position, verbatim) }
            if byte == 0x5C {
                verbatim = false
                position += 2  // the escaped character cannot end the string
            } else {
                if byte < 0x20 || byte >= 0x80 { verbatim = false }
                position += 1
            }
        }
    }
}
