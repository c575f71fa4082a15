/// A JSON value, as parsed from or serialized to text by ``JSONValue/parse(_:maxDepth:)``
/// and ``JSONValue/serialized()``.
///
/// Integers are kept exact (`Int64`); numbers with a fraction or exponent are `Double`.
/// Objects keep their members in insertion order (see ``JSONObject``).
///
/// ```swift
/// let reply: JSONValue = ["jsonrpc": "2.0", "id": 1, "result": ["ok": true]]
/// let bytes = reply.serialized()          // {"jsonrpc":"2.0","id":1,"result":{"ok":true}}
/// let back = try JSONValue.parse(bytes)
/// back["result"]?["ok"]?.boolValue        // true
/// ```
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    /// The name of this value's JSON type, for error messages ("string", "object", ...).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    public var isNull: Bool { if case .null = self { true } else { false } }

    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    public var intValue: Int64? { if case .int(let i) = self { i } else { nil } }

    /// The value as a `Double` when it is any number.
    public var numberValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }

    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }

    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }

    /// The member `key` when this is an object, else `nil`.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}

extension JSONValue {
    /// An array of strings.
    public init(_ strings: [String]) { self = .array(strings.map { .string($0) }) }
    /// A string, or `null` when `nil`.
    public init(_ string: String?) { self = string.map { .string($0) } ?? .null }
}
