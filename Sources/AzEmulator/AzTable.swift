import JSON

/// knack's `table` output: the command's table transformer's rows (`az account list`'s), else
/// knack's automatic rows (an object's scalar members, keys sorted and first letter capitalized,
/// `id`, `type` and `etag` left out), printed as python-tabulate's `simple` format with
/// `disable_numparse`: columns two spaces apart, each at least its header plus two wide,
/// left-aligned, a row of dashes under the headers, trailing spaces cut, and a final newline.
public enum AzTable {
    /// One row: headers and values, in column order.
    public typealias Row = [(header: String, value: JSONValue)]

    /// The text of `rows` (empty when there are none, as knack prints nothing).
    public static func render(_ rows: [Row]) -> String {
        guard let first = rows.first, !first.isEmpty else { return "" }
        let headers = first.map(\.header)
        let cells = rows.map { row in headers.map { header in cell(row.first { $0.header == header }?.value ?? .null) } }
        let widths = headers.indices.map { column in
            max(headers[column].count + 2, cells.map { $0[column].count }.max() ?? 0)
        }
        func line(_ texts: [String]) -> String {
            let padded = zip(texts, widths).map { $0 + String(repeating: " ", count: max(0, $1 - $0.count)) }
            return String(padded.joined(separator: "  ").reversed().drop { $0 == " " }.reversed()) + "\n"
        }
        return line(headers) + line(widths.map { String(repeating: "-", count: $0) }) + cells.map(line).joined()
    }

    /// knack's automatic rows of a result (`_TableOutput._auto_table`, keys sorted).
    public static func automaticRows(_ value: JSONValue) -> [Row] {
        (value.arrayValue ?? [value]).map(automaticRow)
    }

    private static let skippedKeys: Set<String> = ["id", "type", "etag"]

    private static func automaticRow(_ value: JSONValue) -> Row {
        switch value {
        case .object(let object):
            return object.keys.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }.compactMap { key in
                guard !skippedKeys.contains(key), let member = object[key] else { return nil }
                switch member {
                case .null, .array, .object: return nil
                default: return (header: key.prefix(1).uppercased() + key.dropFirst(), value: member)
                }
            }
        case .array(let items):
            return items.enumerated().map { (header: "Column\($0.offset + 1)", value: $0.element) }
        default:
            return [(header: "Result", value: value)]
        }
    }

    /// A cell as tabulate prints it: Python's `str` (`True`, a number as written), nothing for null.
    private static func cell(_ value: JSONValue) -> String {
        switch value {
        case .null: return ""
        case .string(let text): return text
        case .bool(let flag): return flag ? "True" : "False"
        case .int(let number): return String(number)
        default: return String(decoding: value.serialized(), as: UTF8.self)
        }
    }
}
