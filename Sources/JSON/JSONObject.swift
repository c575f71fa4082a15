/// A JSON object: members in insertion order, looked up by key.
///
/// A small object (at most ``indexThreshold`` members, as most are: a token, a claim set, a
/// request) is searched in order, which compares a few keys and hashes none; a bigger one
/// (a cache section of many entries) keeps an index of positions by key, O(1).
///
/// Equality ignores member order, as JSON does.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var keys: [String] = []
    private var values: [JSONValue] = []
    /// Positions by key, once there are more than ``indexThreshold`` members.
    private var positions: [String: Int]?

    /// Up to this many members, lookups search the keys in order.
    static let indexThreshold = 16

    public init() {}

    /// An empty object with room for `minimumCapacity` members.
    public init(minimumCapacity: Int) {
        keys.reserveCapacity(minimumCapacity)
        values.reserveCapacity(minimumCapacity)
    }

    /// An object with `members` in order; a repeated key keeps its first position and last value.
    public init<S: Sequence>(_ members: S) where S.Element == (String, JSONValue) {
        self.init(Array(members))
    }

    /// An object with `members` in order. Not generic: called from other modules, the generic
    /// form looked its iterator type up at run time (demangling it, checking conformances).
    public init(_ members: [(String, JSONValue)]) {
        keys.reserveCapacity(members.count)
        values.reserveCapacity(members.count)
        for (key, value) in members { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// The member named `key`; setting `nil` removes it.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { values[$0] } }
        set {
            switch (position(of: key), newValue) {
            case (let index?, let newValue?):
                values[index] = newValue
            case (nil, let newValue?):
                keys.append(key)
                values.append(newValue)
                if positions != nil {
                    positions?[key] = keys.count - 1
                } else if keys.count > Self.indexThreshold {
                    indexPositions()
                }
            case (let index?, nil):
                keys.remove(at: index)
                values.remove(at: index)
                if positions != nil { indexPositions() }
            case (nil, nil):
                break
            }
        }
    }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return keys.firstIndex(of: key)
    }

    private mutating func indexPositions() {
        var index: [String: Int] = [:]
        index.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() { index[key] = position }
        positions = index
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
            return (object.keys[index], object.values[index])
        }
    }

    /// The same members with the same values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in lhs.keys.indices {
            guard let other = rhs[lhs.keys[index]], other == lhs.values[index] else { return false }
        }
        return true
    }

    /// Order does not count: the members' own hashes are combined by XOR.
    public func hash(into hasher: inout Hasher) {
        var members = 0
        for index in keys.indices {
            var member = Hasher()
            member.combine(keys[index])
            member.combine(values[index])
            members ^= member.finalize()
        }
        hasher.combine(count)
        hasher.combine(members)
    }
}
