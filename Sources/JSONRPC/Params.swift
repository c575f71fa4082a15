import JSON

/// A value type that a method can read from its params.
public protocol ParamValue: Sendable {
    /// How the expected type is named in error messages ("a string", ...).
    static var expectation: String { get }
    init?(param: JSONValue)
}

extension String: ParamValue {
    public static var expectation: String { "a string" }
    public init?(param: JSONValue) {
        guard let s = param.stringValue else { return nil }
        self = s
    }
}

extension Bool: ParamValue {
    public static var expectation: String { "a boolean" }
    public init?(param: JSONValue) {
        guard let b = param.boolValue else { return nil }
        self = b
    }
}

extension Int: ParamValue {
    public static var expectation: String { "an integer" }
    public init?(param: JSONValue) {
        guard let i = param.intValue, let v = Int(exactly: i) else { return nil }
        self = v
    }
}

extension Array: ParamValue where Element == String {
    public static var expectation: String { "an array of strings" }
    public init?(param: JSONValue) {
        guard let items = param.arrayValue else { return nil }
        var strings: [String] = []
        for item in items {
            guard let s = item.stringValue else { return nil }
            strings.append(s)
        }
        self = strings
    }
}

extension JSONObject: ParamValue {
    public static var expectation: String { "an object" }
    public init?(param: JSONValue) {
        guard let o = param.objectValue else { return nil }
        self = o
    }
}

extension JSONValue: ParamValue {
    public static var expectation: String { "any JSON value" }
    public init?(param: JSONValue) { self = param }
}

/// The by-name params of one request, checked member by member.
///
/// Unknown members are rejected (a misspelt `scope` should not be silently ignored), and
/// every error is -32602 naming the member by its dotted path.
///
/// ```swift
/// let params = try Params(request.params, allowed: ["scopes", "account"])
/// let scopes: [String]? = try params.optional("scopes")
/// let account = try params.nested("account", allowed: ["homeAccountId", "username"])
/// ```
public struct Params: Sendable {
    public let members: JSONObject
    @usableFromInline let path: String

    /// Checks that `params` is an object (or absent) with no member outside `allowed`.
    public init(_ params: JSONValue?, allowed: Set<String>, path: String = "") throws(RPCError) {
        switch params {
        case nil, .null?: members = [:]
        case .object(let object)?: members = object
        case .array?:
            throw .invalidParams("params must be an object of named members, not an array", member: path.isEmpty ? nil : path)
        case let other?:
            throw .invalidParams("\(path.isEmpty ? "params" : path) must be an object, not \(other.typeName)", member: path.isEmpty ? nil : path)
        }
        self.path = path
        if let unknown = members.keys.first(where: { !allowed.contains($0) }) {
            let hint = NearestName.suggestion(for: unknown, among: allowed).map { " (did you mean '\($0)'?)" } ?? ""
            throw .invalidParams("unknown member '\(qualified(unknown))'\(hint)", member: qualified(unknown))
        }
    }

    /// The member's value, or `nil` when absent or `null`. Inlinable, so it is specialized
    /// for each type where it is called (no `Optional<T>` metadata made at run time).
    @inlinable
    public func optional<T: ParamValue>(_ key: String, as type: T.Type = T.self) throws(RPCError) -> T? {
        guard let raw = members[key], !raw.isNull else { return nil }
        guard let value = T(param: raw) else {
            throw .invalidParams("'\(qualified(key))' must be \(T.expectation), not \(raw.typeName)", member: qualified(key))
        }
        return value
    }

    /// The member's value; absent or `null` is an error.
    @inlinable
    public func required<T: ParamValue>(_ key: String, as type: T.Type = T.self) throws(RPCError) -> T {
        guard let value = try optional(key, as: type) else {
            throw .invalidParams("missing member '\(qualified(key))'", member: qualified(key))
        }
        return value
    }

    /// A string member that must be one of `choices`.
    public func optional(_ key: String, oneOf choices: [String]) throws(RPCError) -> String? {
        guard let value = try optional(key, as: String.self) else { return nil }
        guard choices.contains(value) else {
            throw .invalidParams("'\(qualified(key))' must be one of \(choices.joined(separator: ", ")), not '\(value)'", member: qualified(key))
        }
        return value
    }

    /// An object member checked with its own allowed members.
    public func nested(_ key: String, allowed: Set<String>) throws(RPCError) -> Params? {
        guard let raw = members[key], !raw.isNull else { return nil }
        return try Params(raw, allowed: allowed, path: qualified(key))
    }

    @usableFromInline func qualified(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}
