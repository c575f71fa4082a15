import JSON

/// The `id` of a JSON-RPC request: a string, an integer or (discouraged, but legal) `null`.
///
/// A fractional number is accepted as an id and echoed back exactly.
public enum RequestID: Sendable, Hashable, CustomStringConvertible {
    case number(Int64)
    case fractional(Double)
    case string(String)
    case null

    /// The id in `value`, or `nil` when `value` cannot be an id (an object, array or boolean).
    public init?(_ value: JSONValue) {
        switch value {
        case .int(let i): self = .number(i)
        case .double(let d): self = .fractional(d)
        case .string(let s): self = .string(s)
        case .null: self = .null
        default: return nil
        }
    }

    public var json: JSONValue {
        switch self {
        case .number(let i): .int(i)
        case .fractional(let d): .double(d)
        case .string(let s): .string(s)
        case .null: .null
        }
    }

    public var description: String { json.jsonText }
}
