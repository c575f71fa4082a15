import JSON

/// What az prints, byte for byte: knack's `json` format (Python's `json.dumps` with
/// `indent=2, sort_keys=True, ensure_ascii=False` and a final newline) and its `tsv` format
/// (a value per line; an object's values in key order, tab-separated), after `--query`.
public enum AzOutput {
    /// The text for stdout; empty when the (queried) result is `null`, as az prints nothing then.
    /// `table` is the command's table transformer (knack applies it only without `--query`;
    /// else, and without one, knack's automatic rows).
    public static func render(_ result: JSONValue, _ options: AzOutputOptions, table: ((JSONValue) -> [AzTable.Row])? = nil) -> String {
        let value = options.query?.apply(to: result) ?? result
        if value.isNull { return "" }
        switch options.format {
        case .json, .jsonc: return json(value)
        case .tsv: return tsv(value)
        case .table: return AzTable.render(options.query == nil ? (table ?? AzTable.automaticRows)(value) : AzTable.automaticRows(value))
        case .none: return ""
        }
    }

    /// Python's `json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)` + "\n".
    public static func json(_ value: JSONValue) -> String {
        var text = ""
        write(value, indent: 0, into: &text)
        return text + "\n"
    }

    /// knack's tsv: a list is one row per item, anything else one row.
    public static func tsv(_ value: JSONValue) -> String {
        (value.arrayValue ?? [value]).map(tsvRow).joined()
    }

    private static func tsvRow(_ value: JSONValue) -> String {
        switch value {
        case .object(let object): return sortedMembers(object).map { tsvCell($0.value) }.joined(separator: "\t") + "\n"
        case .array(let items): return items.map(tsvCell).joined(separator: "\t") + "\n"
        case .bool(let flag): return (flag ? "true" : "false") + "\n"
        default: return tsvCell(value) + "\n"
        }
    }

    /// One cell: a list's length, nothing for an object, Python's `str` of anything else
    /// (`True`, `None`).
    private static func tsvCell(_ value: JSONValue) -> String {
        switch value {
        case .array(let items): return String(items.count)
        case .object: return ""
        case .string(let text): return text
        case .bool(let flag): return flag ? "True" : "False"
        case .null: return "None"
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        }
    }

    private static func sortedMembers(_ object: JSONObject) -> [(key: String, value: JSONValue)] {
        object.map { (key: $0.key, value: $0.value) }.sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }
    }

    private static func write(_ value: JSONValue, indent: Int, into text: inout String) {
        let inner = String(repeating: " ", count: indent + 2)
        switch value {
        case .object(let object) where !object.isEmpty:
            text += "{\n"
            for (index, member) in sortedMembers(object).enumerated() {
                text += inner + quoted(member.key) + ": "
                write(member.value, indent: indent + 2, into: &text)
                text += index == object.count - 1 ? "\n" : ",\n"
            }
            text += String(repeating: " ", count: indent) + "}"
        case .array(let items) where !items.isEmpty:
            text += "[\n"
            for (index, item) in items.enumerated() {
                text += inner
                write(item, indent: indent + 2, into: &text)
                text += index == items.count - 1 ? "\n" : ",\n"
            }
            text += String(repeating: " ", count: indent) + "]"
        case .object: text += "{}"
        case .array: text += "[]"
        case .string(let string): text += quoted(string)
        case .bool(let flag): text += flag ? "true" : "false"
        case .null: text += "null"
        case .int(let number): text += String(number)
        case .double: text += String(decoding: value.serialized(), as: UTF8.self)
        }
    }

    /// A JSON string as Python writes it without `ensure_ascii`: `"` `\` and the control
    /// characters escaped (`\n`, `\u001b`), everything else as is.
    static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
