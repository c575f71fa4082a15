import JSON

/// An entry of one section of the cache document.
protocol CacheEntity: Sendable, Hashable {
    /// The top-level section holding this kind of entry.
    static var section: String { get }
    /// The entry read from its JSON object, or `nil` when a required member is missing
    /// (such entries are kept in the document as they are, but never returned).
    init?(json: JSONObject)
    /// The JSON object written for this entry.
    var json: JSONObject { get }
    /// The key MSAL for Python would file this entry under.
    var cacheKey: String { get }
    /// A member besides `home_account_id` that the section indexes (accounts: `username`).
    static var lookupField: String? { get }
    /// Whether an entry without a home account ID (`null`, as MSAL for Python writes an app
    /// token's) is indexed under the empty one: an app's entries, found with `""`.
    static var appEntriesHaveNoHome: Bool { get }
}

extension CacheEntity {
    static var lookupField: String? { nil }
    static var appEntriesHaveNoHome: Bool { false }
}

extension String {
    /// Equality ignoring ASCII/Unicode case, used for IDs, hosts and tenants.
    func equalsIgnoringCase(_ other: String) -> Bool {
        self == other || lowercased() == other.lowercased()
    }
}

extension Sequence where Element == String {
    /// Whether one of these strings equals `value` ignoring case.
    func containsIgnoringCase(_ value: String) -> Bool {
        contains { $0.equalsIgnoringCase(value) }
    }
}
