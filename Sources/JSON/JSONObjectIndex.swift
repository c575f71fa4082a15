/// A JSON object document validated and located without a tree: its bytes, the byte range of
/// each top-level member and, in chosen sections (top-level objects), of each entry, with a
/// few string members of each entry read ahead. Values are parsed by jansson from their own
/// bytes only when read; ``tree()`` parses the whole document when it is to be changed.
///
/// For large documents of which a request reads a handful of entries (the token cache: 30 MB
/// for 10,000 accounts, five entries per silent request), loading costs one pass over the
/// bytes instead of jansson's parse of them.
///
/// ```swift
/// guard let index = JSONObjectIndex(scanning: bytes, sections: ["Account"], fields: ["username"])
/// else { /* invalid or unusual: parse with JSONTree(parsingObject:) for the verdict */ }
/// index.forEachEntry(of: "Account") { key, fields in print(key, fields[0] ?? "-") }
/// let entry = index.member(key, of: "Account")
/// ```
///
/// Immutable: safe to read from several threads at once.
public struct JSONObjectIndex: Sendable {
    /// The document, as given.
    public let bytes: [UInt8]
    private let layout: Layout

    /// What ``JSONScanner`` found.
    struct Layout: Sendable {
        var keys: [String] = []
        var members: [String: Range<Int>] = [:]
        var sections: [String: JSONSectionIndex] = [:]
    }

    /// Scans `bytes`; `nil` when they are not a JSON object document that jansson's strict
    /// parse accepts, or when the scanner cannot be sure that it does (see ``JSONScanner``):
    /// parse them with ``JSONTree/init(parsingObject:)`` then, for the verdict.
    ///
    /// - Parameters:
    ///   - sections: the top-level members whose entries are indexed (when they are objects).
    ///   - fields: the members of each entry read ahead when they are strings, in this order.
    /// - Complexity: O(n) in the size of the input, one pass, no tree.
    public init?(scanning bytes: [UInt8], sections: Set<String>, fields: [String]) {
        let layout = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, fields: fields)
            return scanner?.scanDocument(sections: sections)
        }
        guard let layout else { return nil }
        self.bytes = bytes
        self.layout = layout
    }

    // MARK: Top level

    /// The top-level member names, in order.
    public var keys: [String] { layout.keys }

    /// Whether the top-level member `key` is an object; `nil` when it is absent.
    public func isObject(forKey key: String) -> Bool? {
        layout.members[key].map { bytes[$0.lowerBound] == 0x7B }
    }

    /// The top-level member `key`, parsed (`nil` when absent or deeper than `maxDepth`).
    public func value(forKey key: String, maxDepth: Int = JSONValue.defaultMaxDepth) -> JSONValue? {
        layout.members[key].flatMap { try? JSONValue.parse(bytes[$0], maxDepth: maxDepth) }
    }

    /// The whole document as a jansson tree, to change (one full parse).
    public func tree() -> JSONTree {
        if let tree = try? JSONTree(parsingObject: bytes) { return tree }
        // Not reached (the scanner accepts only what jansson accepts); member by member if so.
        let tree = JSONTree()
        for key in keys { tree.setValue(value(forKey: key), forKey: key) }
        return tree
    }

    // MARK: Entries of a section

    /// The entry `key` of `section`, parsed.
    public func member(_ key: String, of section: String) -> JSONValue? {
        guard let index = layout.sections[section] else { return value(forKey: section)?[key] }
        return index.byKey[key].flatMap { try? JSONValue.parse(bytes[index.ranges[$0]]) }
    }

    /// Calls `body` with each entry of `section` and its parsed value, in order.
    public func forEachMember(of section: String, _ body: (String, JSONValue?) -> Void) {
        if let index = layout.sections[section] {
            for (key, range) in zip(index.keys, index.ranges) { body(key, try? JSONValue.parse(bytes[range])) }
        } else if let object = value(forKey: section)?.objectValue {
            for (key, value) in object { body(key, value) }
        }
    }

    /// Calls `body` with each entry key of an indexed `section` and the entry's string
    /// members named in `fields` (`nil`: absent, not a string, or the entry not an object).
    public func forEachEntry(of section: String, _ body: (String, ArraySlice<String?>) -> Void) {
        guard let index = layout.sections[section] else { return }
        for (position, key) in index.keys.enumerated() {
            body(key, index.fields[position * index.fieldCount..<(position + 1) * index.fieldCount])
        }
    }
}

/// The entries of one section, as ``JSONScanner`` found them.
struct JSONSectionIndex: Sendable {
    let fieldCount: Int
    var keys: [String] = []
    var ranges: [Range<Int>] = []
    var byKey: [String: Int] = [:]
    /// `fieldCount` values per entry.
    var fields: [String?] = []

    init(fieldCount: Int) {
        self.fieldCount = fieldCount
    }
}
