import CJansson

#if canImport(Glibc)
    import Glibc
#endif

extension JSONValue {
    /// The text Python's `json.dumps(value, indent=spaces, sort_keys=True, ensure_ascii=False)`
    /// writes (what Azure CLI prints for `-o json`): members in code-point order of their keys,
    /// `spaces` of indentation per level, `": "` and `","` as separators, text beyond ASCII as
    /// it is, and control characters escaped with lower-case hex digits (`\u001b`) as Python
    /// writes them. jansson lays the text out; only the case of its `\u` escapes is changed.
    public func indentedText(spaces: Int = 2) -> String {
        guard let tree = JanssonWriter.tree(for: self) else { return "" }
        defer { json_decref(tree) }
        guard let text = json_dumps(tree, cjansson_indented_encode_flags(Int32(spaces))) else { return "" }
        defer { free(text) }
        var bytes = Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
        Self.lowercaseUnicodeEscapes(&bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Lower-cases the hex digits of every `\uXXXX` escape of serialized JSON text (and only
    /// those: a backslash escapes exactly the character after it, so `\\u` is a backslash
    /// followed by a `u`).
    static func lowercaseUnicodeEscapes(_ bytes: inout [UInt8]) {
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count else {
                index += 1
                continue
            }
            if bytes[index + 1] == UInt8(ascii: "u") {
                for digit in index + 2..<min(index + 6, bytes.count) where (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(bytes[digit]) {
                    bytes[digit] += 0x20
                }
            }
            index += 2
        }
    }
}
