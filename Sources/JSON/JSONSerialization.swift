import CJansson

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension JSONValue {
    /// The compact JSON text of this value (no whitespace, members in insertion order),
    /// as UTF-8 bytes.
    public func serialized() -> [UInt8] {
        var output: [UInt8] = []
        serialize(into: &output)
        return output
    }

    /// The compact JSON text of this value as a `String`.
    public var jsonText: String { String(decoding: serialized(), as: UTF8.self) }

    /// Appends the compact JSON text of this value to `output`.
    public func serialize(into output: inout [UInt8]) {
        guard let tree = JanssonWriter.tree(for: self) else { return }
        defer { json_decref(tree) }
        JanssonWriter.dump(tree, into: &output)
    }
}

/// Builds a jansson tree (a new reference) for a ``JSONValue``.
enum JanssonWriter {
    /// Appends the compact JSON text of `tree` to `output`.
    ///
    /// jansson makes the whole text in its own buffer (`json_dumps`), copied over once. A dump
    /// callback into Swift ran once per token of the text (each `{`, key, `:` and value): a
    /// few hundred calls, most of the cost, for one token reply.
    static func dump(_ tree: UnsafeMutablePointer<json_t>, into output: inout [UInt8]) {
        guard let text = json_dumps(tree, cjansson_compact_encode_flags()) else { return }
        defer { free(text) }
        output.append(contentsOf: UnsafeRawBufferPointer(start: text, count: strlen(text)))
    }

    static func tree(for value: JSONValue) -> UnsafeMutablePointer<json_t>? {
        switch value {
        case .null: return json_null()
        case .bool(let b): return b ? json_true() : json_false()
        case .int(let i): return json_integer(json_int_t(i))
        case .double(let d): return d.isFinite ? json_real(d) : json_null()
        case .string(var s):
            return s.withUTF8 { utf8 in
                withCChars(utf8) { json_stringn_nocheck($0, $1) }
            }
        case .array(let elements):
            guard let array = json_array() else { return nil }
            for element in elements {
                if let child = tree(for: element) { json_array_append_new(array, child) }
            }
            return array
        case .object(let object):
            guard let result = json_object() else { return nil }
            for (key, member) in object {
                guard let child = tree(for: member) else { continue }
                var key = key
                key.withUTF8 { utf8 in
                    withCChars(utf8) { _ = json_object_setn_new_nocheck(result, $0, $1, child) }
                }
            }
            return result
        }
    }
}

/// Calls `body` with `utf8` as a C character pointer (never null, even when empty) and its length.
func withCChars<R>(_ utf8: UnsafeBufferPointer<UInt8>, _ body: (UnsafePointer<CChar>, Int) -> R) -> R {
    guard let base = utf8.baseAddress else {
        return withUnsafePointer(to: CChar(0)) { body($0, 0) }
    }
    return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { body($0, utf8.count) }
}
