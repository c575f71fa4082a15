import CJansson

/// A JSON object document kept in jansson's own tree: read and changed in place, two levels
/// deep (top-level members, and the members of a top-level object), without converting the
/// whole document into ``JSONValue``s.
///
/// For large documents of which a request needs a handful of entries (the token cache: 20 MB
/// for 10,000 accounts, of which a silent request reads five entries), loading costs what
/// jansson's parse costs, and an entry is converted only when it is read.
///
/// ```swift
/// let tree = try JSONTree(parsingObject: bytes)
/// tree.forEachMember(of: "Account") { key, entry in print(key, entry.string("username") ?? "") }
/// tree.setMember("k", of: "Account", to: ["username": "alice"])
/// let text = tree.serialized()
/// ```
///
/// Concurrency: reading from several threads at once is safe; a change must not overlap any
/// other access. Owners that share a tree copy it before changing it (``copy()``), as
/// ``isKnownUniquelyReferenced(_:)`` tells.
public final class JSONTree: @unchecked Sendable {
    private let root: UnsafeMutablePointer<json_t>

    private init(owning root: UnsafeMutablePointer<json_t>) {
        self.root = root
    }

    deinit { json_decref(root) }

    /// An empty object.
    public convenience init() {
        guard let empty = json_object() else { fatalError("jansson: out of memory") }
        self.init(owning: empty)
    }

    /// Parses `bytes` as strictly as ``JSONValue/parse(_:maxDepth:)`` (UTF-8, no duplicate
    /// keys); the top level must be an object.
    ///
    /// - Throws: ``JSONParseError``; a top level that is not an object is reported with its
    ///   JSON type name.
    /// - Complexity: O(n), jansson's own parse, of the text without its long string values
    ///   when it has some (``LongStringLift``: a token cache's secrets, put back afterwards).
    public convenience init(parsingObject bytes: [UInt8]) throws(JSONParseError) {
        let lifted = bytes.withUnsafeBufferPointer { whole -> UnsafeMutablePointer<json_t>? in
            guard let lift = LongStringLift(whole), let root = try? Self.parse(lift.text(of: whole)) else { return nil }
            guard cjansson_typeof(root) == JSON_OBJECT, lift.restore(into: root, from: whole) else {
                json_decref(root)
                return nil
            }
            return root
        }
        if let lifted {
            self.init(owning: lifted)
            return
        }
        let parsed = try Self.parse(bytes)  // the document whole: also the verdict and its position
        guard cjansson_typeof(parsed) == JSON_OBJECT else {
            let name = Self.typeName(parsed)
            json_decref(parsed)
            throw JSONParseError(message: "the top level is a JSON \(name), not an object", position: 0)
        }
        self.init(owning: parsed)
    }

    /// jansson's strict parse of `bytes` (a new reference).
    private static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> UnsafeMutablePointer<json_t> {
        var error = json_error_t()
        let parsed = bytes.withUnsafeBytes { raw -> UnsafeMutablePointer<json_t>? in
            guard let base = raw.baseAddress else { return nil }
            return json_loadb(base.assumingMemoryBound(to: CChar.self), raw.count, cjansson_strict_decode_flags(), &error)
        }
        guard let parsed else {
            let message = bytes.isEmpty ? "empty input" : String(cString: cjansson_error_text(&error))
            throw JSONParseError(message: message, position: Int(error.position))
        }
        return parsed
    }

    /// A deep copy, to change without affecting this tree.
    public func copy() -> JSONTree {
        guard let copied = json_deep_copy(root) else { fatalError("jansson: out of memory") }
        return JSONTree(owning: copied)
    }

    /// The compact JSON text (members in insertion order), as UTF-8 bytes.
    public func serialized() -> [UInt8] {
        var output: [UInt8] = []
        JanssonWriter.dump(root, into: &output)
        return output
    }

    // MARK: Top level

    /// The top-level member names, in order.
    public var keys: [String] {
        var keys: [String] = []
        Self.forEach(root) { key, _ in keys.append(key) }
        return keys
    }

    /// The top-level member `key`, converted (`nil` when absent or deeper than `maxDepth`).
    public func value(forKey key: String, maxDepth: Int = JSONValue.defaultMaxDepth) -> JSONValue? {
        Self.child(root, key).flatMap { JanssonReader(maxDepth: maxDepth).value(of: $0, depth: 1) }
    }

    /// Whether the top-level member `key` is an object; `nil` when it is absent.
    public func isObject(forKey key: String) -> Bool? {
        Self.child(root, key).map { cjansson_typeof($0) == JSON_OBJECT }
    }

    /// Sets (or with `nil` removes) the top-level member `key`.
    public func setValue(_ value: JSONValue?, forKey key: String) {
        Self.set(root, key, value)
    }

    // MARK: Members of a top-level object

    /// Calls `body` with each member of the top-level object `section`, in order. The
    /// ``JSONTreeEntry`` is valid only during the call.
    public func forEachMember(of section: String, _ body: (String, JSONTreeEntry) -> Void) {
        guard let object = object(section) else { return }
        Self.forEach(object) { key, value in body(key, JSONTreeEntry(node: value)) }
    }

    /// The member `key` of the top-level object `section`, converted.
    public func member(_ key: String, of section: String) -> JSONValue? {
        object(section).flatMap { Self.child($0, key) }
            .flatMap { JanssonReader(maxDepth: JSONValue.defaultMaxDepth).value(of: $0, depth: 1) }
    }

    /// Sets (or with `nil` removes) the member `key` of the top-level object `section`,
    /// creating the section (at the end) when it is absent.
    public func setMember(_ key: String, of section: String, to value: JSONValue?) {
        if let object = object(section) {
            Self.set(object, key, value)
        } else if value != nil {
            setValue(.object(JSONObject()), forKey: section)
            object(section).map { Self.set($0, key, value) }
        }
    }

    // MARK: jansson

    private func object(_ section: String) -> UnsafeMutablePointer<json_t>? {
        guard let node = Self.child(root, section), cjansson_typeof(node) == JSON_OBJECT else { return nil }
        return node
    }

    private static func typeName(_ node: UnsafeMutablePointer<json_t>) -> String {
        switch cjansson_typeof(node) {
        case JSON_ARRAY: "array"
        case JSON_STRING: "string"
        case JSON_INTEGER: "integer"
        case JSON_REAL: "number"
        case JSON_TRUE, JSON_FALSE: "boolean"
        default: "null"
        }
    }

    private static func child(_ object: UnsafeMutablePointer<json_t>, _ key: String) -> UnsafeMutablePointer<json_t>? {
        var key = key
        return key.withUTF8 { utf8 in withCChars(utf8) { json_object_getn(object, $0, $1) } }
    }

    private static func set(_ object: UnsafeMutablePointer<json_t>, _ key: String, _ value: JSONValue?) {
        var key = key
        key.withUTF8 { utf8 in
            withCChars(utf8) { chars, count in
                if let value, let tree = JanssonWriter.tree(for: value) {
                    _ = json_object_setn_new_nocheck(object, chars, count, tree)
                } else {
                    _ = json_object_deln(object, chars, count)
                }
            }
        }
    }

    private static func forEach(_ object: UnsafeMutablePointer<json_t>, _ body: (String, UnsafeMutablePointer<json_t>) -> Void) {
        var iterator = json_object_iter(object)
        while let current = iterator {
            if let chars = json_object_iter_key(current), let value = json_object_iter_value(current) {
                let bytes = UnsafeRawBufferPointer(start: chars, count: json_object_iter_key_len(current))
                body(String(decoding: bytes, as: UTF8.self), value)
            }
            iterator = json_object_iter_next(object, current)
        }
    }
}

/// A member of a ``JSONTree`` section, lent to a ``JSONTree/forEachMember(of:_:)`` callback.
public struct JSONTreeEntry {
    fileprivate let node: UnsafeMutablePointer<json_t>

    /// The string member `key` of this entry, when it is an object and that member a string.
    public func string(_ key: String) -> String? {
        guard cjansson_typeof(node) == JSON_OBJECT else { return nil }
        var key = key
        let member = key.withUTF8 { utf8 in withCChars(utf8) { json_object_getn(node, $0, $1) } }
        guard let member, cjansson_typeof(member) == JSON_STRING, let chars = json_string_value(member) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: chars, count: json_string_length(member)), as: UTF8.self)
    }

    /// The whole entry, converted.
    public var value: JSONValue? {
        JanssonReader(maxDepth: JSONValue.defaultMaxDepth).value(of: node, depth: 1)
    }
}
