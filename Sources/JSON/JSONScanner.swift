/// A strict validator over raw JSON bytes that also locates the top-level members of an
/// object document and, in chosen sections (top-level objects), each entry's byte range and a
/// few string members of it, without building any tree (``JSONObjectIndex`` is its result).
///
/// Its rule: what it accepts, jansson with the strict flags accepts and parses to the same
/// values (the values are later parsed by jansson from the same bytes). It gives up (`nil`)
/// on anything invalid or unsure: escapes or non-ASCII bytes in keys it indexes, escapes in
/// any key, integers of more than 18 digits, reals that might overflow, nesting deeper than
/// ``maxDepth``, a nested object of more than ``maxPairwiseKeys`` members; the caller then
/// parses the document with jansson, whose verdict and error stand.
struct JSONScanner {
    /// Deeper input is left to jansson (its own limit is 2,048).
    static let maxDepth = 128
    /// Nested objects are checked for duplicate keys pair by pair up to this many members.
    static let maxPairwiseKeys = 256

    private let base: UnsafePointer<UInt8>
    private let end: Int
    private var pos = 0
    /// The keys of the objects being scanned (a stack: each object pops its own).
    private var keySpans: [Range<Int>] = []
    /// The member names captured in entries, and what was found for each in the current entry.
    private let fields: [[UInt8]]
    private var captured: [Span?]

    /// A string's contents (between the quotes) and whether it holds an escape.
    struct Span {
        let range: Range<Int>
        let escaped: Bool
    }

    /// A scanner of `buffer` (`nil` when it is empty: no document).
    init?(_ buffer: UnsafeBufferPointer<UInt8>, fields: [String]) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return nil }
        self.base = base
        end = buffer.count
        self.fields = fields.map { Array($0.utf8) }
        captured = Array(repeating: nil, count: fields.count)
    }

    // MARK: Documents

    /// Scans a whole document: an object, then only whitespace.
    mutating func scanDocument(sections: Set<String>) -> JSONObjectIndex.Layout? {
        skipWhitespace()
        guard peek(0x7B) else { return nil }
        pos += 1
        var layout = JSONObjectIndex.Layout()
        if !scanMembers({ scanner, key, _ in
            guard let name = scanner.asciiKey(key), layout.members[name] == nil else { return false }
            let start = scanner.pos
            if sections.contains(name), scanner.peek(0x7B) {
                guard let section = scanner.scanSection() else { return false }
                layout.sections[name] = section
            } else if !scanner.scanValue(depth: 1) {
                return false
            }
            layout.keys.append(name)
            layout.members[name] = start..<scanner.pos
            return true
        }) {
            return nil
        }
        skipWhitespace()
        return pos == end ? layout : nil
    }

    /// Scans a section object (depth 2), indexing each entry and its captured string members.
    private mutating func scanSection() -> JSONSectionIndex? {
        pos += 1
        var section = JSONSectionIndex(fieldCount: fields.count)
        let scanned = scanMembers { scanner, key, _ in
            guard let name = scanner.asciiKey(key), section.byKey.updateValue(section.keys.count, forKey: name) == nil
            else { return false }
            let start = scanner.pos
            for index in scanner.captured.indices { scanner.captured[index] = nil }
            guard scanner.peek(0x7B) ? scanner.scanObject(depth: 3, capture: true) : scanner.scanValue(depth: 2)
            else { return false }
            section.keys.append(name)
            section.ranges.append(start..<scanner.pos)
            for span in scanner.captured { section.fields.append(span.flatMap(scanner.string)) }
            return true
        }
        return scanned ? section : nil
    }

    /// Scans `key: value` pairs up to the closing brace (the opening one already read);
    /// `member` scans each value (positioned at it) and checks the key.
    private mutating func scanMembers(_ member: (inout JSONScanner, Span, Int) -> Bool) -> Bool {
        skipWhitespace()
        if peek(0x7D) {
            pos += 1
            return true
        }
        var count = 0
        while true {
            guard peek(0x22), let key = scanString(), !key.escaped else { return false }
            skipWhitespace()
            guard peek(0x3A) else { return false }
            pos += 1
            skipWhitespace()
            guard pos < end, member(&self, key, count), let closed = next(closing: 0x7D) else { return false }
            if closed { return true }
            count += 1
        }
    }

    // MARK: Values

    private mutating func scanValue(depth: Int) -> Bool {
        guard pos < end else { return false }
        switch base[pos] {
        case 0x22: return scanString() != nil
        case 0x7B: return scanObject(depth: depth + 1, capture: false)
        case 0x5B: return scanArray(depth: depth + 1)
        case 0x74: return scanLiteral("true")
        case 0x66: return scanLiteral("false")
        case 0x6E: return scanLiteral("null")
        case 0x2D, 0x30...0x39: return scanNumber()
        default: return false
        }
    }

    /// An object whose keys are checked pair by pair for duplicates (byte equality is
    /// jansson's, as keys hold no escapes); with `capture`, the string values of the
    /// captured member names are noted in `captured`.
    private mutating func scanObject(depth: Int, capture: Bool) -> Bool {
        guard depth <= Self.maxDepth else { return false }
        pos += 1
        let first = keySpans.count
        defer { keySpans.removeSubrange(first...) }
        return scanMembers { scanner, key, count in
            guard count < Self.maxPairwiseKeys, !scanner.isDuplicate(key.range, after: first) else { return false }
            scanner.keySpans.append(key.range)
            if capture, scanner.peek(0x22), let field = scanner.fieldIndex(key.range) {
                guard let value = scanner.scanString() else { return false }
                scanner.captured[field] = value
                return true
            }
            return scanner.scanValue(depth: depth)
        }
    }

    private mutating func scanArray(depth: Int) -> Bool {
        guard depth <= Self.maxDepth else { return false }
        pos += 1
        skipWhitespace()
        if peek(0x5D) {
            pos += 1
            return true
        }
        while true {
            guard scanValue(depth: depth), let closed = next(closing: 0x5D) else { return false }
            if closed { return true }
        }
    }

    private mutating func scanLiteral(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard end - pos >= count, Self.equal(base + pos, word.utf8Start, count) else { return false }
        pos += count
        return true
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, within what jansson converts
    /// without a range error: integers of at most 18 digits, reals below 10^200.
    private mutating func scanNumber() -> Bool {
        if peek(0x2D) { pos += 1 }
        guard pos < end else { return false }
        var integerDigits = 1
        if base[pos] == 0x30 {
            pos += 1
        } else {
            guard isDigit(base[pos]) else { return false }
            integerDigits = digits()
        }
        var real = false
        if peek(0x2E) {
            pos += 1
            guard digits() > 0 else { return false }
            real = true
        }
        if pos < end, base[pos] | 0x20 == 0x65 {
            pos += 1
            if pos < end, base[pos] == 0x2B || base[pos] == 0x2D { pos += 1 }
            let exponentDigits = digits()
            guard exponentDigits > 0, exponentDigits <= 2 else { return false }
            real = true
        }
        return real ? integerDigits <= 100 : integerDigits <= 18
    }

    private mutating func digits() -> Int {
        let start = pos
        while pos < end, isDigit(base[pos]) { pos += 1 }
        return pos - start
    }

    // MARK: Strings

    /// A string (positioned at its opening quote): RFC 8259 escapes, UTF-8 as jansson checks
    /// it (no overlong forms, surrogates or code points above U+10FFFF), no control bytes.
    private mutating func scanString() -> Span? {
        pos += 1
        let start = pos
        var escaped = false
        while true {
            pos = JSONText.plainWords(base, from: pos, end: end)
            guard pos < end else { return nil }
            let byte = base[pos]
            if byte == 0x22 {
                pos += 1
                return Span(range: start..<pos - 1, escaped: escaped)
            } else if byte == 0x5C {
                guard scanEscape() else { return nil }
                escaped = true
            } else if byte < 0x20 {
                return nil
            } else if byte < 0x80 {
                pos += 1
            } else if !scanUTF8() {
                return nil
            }
        }
    }

    private mutating func scanEscape() -> Bool {
        guard end - pos >= 2 else { return false }
        switch base[pos + 1] {
        case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
            pos += 2
            return true
        case 0x75:
            guard let unit = hex4(at: pos + 2) else { return false }
            pos += 6
            if (0xDC00...0xDFFF).contains(unit) { return false }
            guard (0xD800...0xDBFF).contains(unit) else { return true }
            guard end - pos >= 2, base[pos] == 0x5C, base[pos + 1] == 0x75, let low = hex4(at: pos + 2),
                (0xDC00...0xDFFF).contains(low)
            else { return false }
            pos += 6
            return true
        default: return false
        }
    }

    private func hex4(at index: Int) -> Int? {
        guard end - index >= 4 else { return nil }
        var value = 0
        for offset in 0..<4 {
            let byte = base[index + offset]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x37
            case 0x61...0x66: digit = byte - 0x57
            default: return nil
            }
            value = value << 4 | Int(digit)
        }
        return value
    }

    /// One well-formed multi-byte UTF-8 sequence (RFC 3629's table).
    private mutating func scanUTF8() -> Bool {
        let lead = base[pos]
        let count: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: count = 1
        case 0xE0:
            count = 2
            low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: count = 2
        case 0xED:
            count = 2
            high = 0x9F
        case 0xF0:
            count = 3
            low = 0x90
        case 0xF1...0xF3: count = 3
        case 0xF4:
            count = 3
            high = 0x8F
        default: return false
        }
        guard end - pos > count, (low...high).contains(base[pos + 1]) else { return false }
        for offset in stride(from: 2, through: count, by: 1) where base[pos + offset] & 0xC0 != 0x80 {
            return false
        }
        pos += count + 1
        return true
    }

    // MARK: Helpers

    private mutating func skipWhitespace() {
        while pos < end {
            switch base[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    private static func equal(_ lhs: UnsafePointer<UInt8>?, _ rhs: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        guard let lhs else { return count == 0 }
        for index in 0..<count where lhs[index] != rhs[index] { return false }
        return true
    }

    /// After a member or an element: `true` past the `closing` byte, `false` past a comma and
    /// the whitespace after it, `nil` at anything else.
    private mutating func next(closing: UInt8) -> Bool? {
        skipWhitespace()
        guard pos < end else { return nil }
        if base[pos] == 0x2C {
            pos += 1
            skipWhitespace()
            return false
        }
        guard base[pos] == closing else { return nil }
        pos += 1
        return true
    }

    private func peek(_ byte: UInt8) -> Bool { pos < end && base[pos] == byte }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

    private func isDuplicate(_ key: Range<Int>, after first: Int) -> Bool {
        keySpans[first...].contains { $0.count == key.count && Self.equal(base + $0.lowerBound, base + key.lowerBound, key.count) }
    }

    private func fieldIndex(_ key: Range<Int>) -> Int? {
        fields.firstIndex { field in
            field.count == key.count && field.withUnsafeBufferPointer { Self.equal($0.baseAddress, base + key.lowerBound, key.count) }
        }
    }

    /// An indexed key as a `String`: plain ASCII only (Swift's `String` equality is Unicode
    /// canonical equivalence, jansson's lookups compare bytes: they agree on ASCII).
    private func asciiKey(_ key: Span) -> String? {
        let bytes = UnsafeBufferPointer(start: base + key.range.lowerBound, count: key.range.count)
        guard !key.escaped, !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A captured string's value: its bytes, or jansson's decoding when it holds escapes.
    private func string(_ span: Span) -> String? {
        let quoted = UnsafeRawBufferPointer(start: base + span.range.lowerBound - 1, count: span.range.count + 2)
        guard span.escaped else { return String(decoding: quoted.dropFirst().dropLast(), as: UTF8.self) }
        return (try? JSONValue.parse(quoted))?.stringValue
    }
}
