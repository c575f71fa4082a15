/// A JSON object: members in insertion order, looked up by key in O(1).
///
/// Equality ignores member order, as JSON does.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var keys: [String] = []
    private var storage: [String: JSONValue] = [:]

    public init() {}

    /// An empty object with room for `minimumCapacity` members.
    public init(minimumCapacity: Int) {
        keys.reserveCapacity(minimumCapacity)
        storage.reserveCapacity(minimumCapacity)
    }

    /// An object with `members` in order; a repeated key keeps its first position and last value.
    public init<S: Sequence>(_ members: S) where S.Element == (String, JSONValue) {
        self.init(Array(members))
    }

    /// An object with `members` in order. Not generic: called from other modules, the generic
    /// form looked its iterator type up at run time (demangling it, checking conformances).
    public init(_ members: [(String, JSONValue)]) {
        for (key, value) in members { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// The member named `key`; setting `nil` removes it.
    public subscript(key: String) -> JSONValue? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    public func makeIterator() -> Iterator { Iterator(object: self) }

    /// The members in order. Not `AnyIterator`: its box's generic metadata was built at run
    /// time (from a mangled name) on every fresh process's first request.
    public struct Iterator: IteratorProtocol {
        let object: JSONObject
        var index = 0

        public mutating func next() -> (key: String, value: JSONValue)? {
            guard index < object.keys.count else { return nil }
            defer { index += 1 }
            let key = object.keys[index]
            return (key, object.storage[key] ?? .null)
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.storage == rhs.storage
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
    }
}
