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

    /// Python's `json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)` + "\n"
    /// (``JSON/JSONValue/indentedText(spaces:)``).
    public static func json(_ value: JSONValue) -> String {
        value.indentedText(spaces: 2) + "\n"
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
}
