import JSON

/// The index of one top-level section of the cache document (`AccessToken`, `Account`, ...):
/// its keys by home account ID (and, for accounts, by username), so a lookup reads only that
/// account's entries.
///
/// The entries themselves stay in the document (its ``JSONObjectIndex`` as loaded, or its
/// ``JSONTree`` once changed) exactly as read (what this code does not touch is written back
/// unchanged) and are parsed into `Entity` values only when read. Building the index takes
/// the two string members per entry the scanner read ahead (or reads them from the tree).
struct CacheSection<Entity: CacheEntity>: Sendable {
    /// Lower-cased home account ID -> keys.
    private var byAccount: [String: [String]] = [:]
    /// Lower-cased value of `Entity.lookupField` -> keys.
    private var byLookupField: [String: [String]] = [:]

    /// The index of `Entity.section` in `tree`.
    ///
    /// - Complexity: O(n) in the section's entries, two member reads each.
    init(indexing tree: JSONTree) {
        let field = Entity.lookupField
        tree.forEachMember(of: Entity.section) { key, entry in
            add(key, home: entry.string("home_account_id"), lookup: field.flatMap { entry.string($0) })
        }
    }

    /// The index of `Entity.section` in a scanned document, from the members it read ahead
    /// (`fields`, which name `home_account_id` and `Entity.lookupField`).
    ///
    /// - Complexity: O(n) in the section's entries, no parse.
    init(indexing scan: JSONObjectIndex, fields: [String]) {
        let home = fields.firstIndex(of: "home_account_id")
        let lookup = Entity.lookupField.flatMap { fields.firstIndex(of: $0) }
        scan.forEachEntry(of: Entity.section) { key, values in
            let start = values.startIndex
            add(key, home: home.flatMap { values[start + $0] }, lookup: lookup.flatMap { values[start + $0] })
        }
    }

    /// Every parsed entry with its key, in file order.
    ///
    /// - Complexity: O(n): parses every entry.
    func all(in entries: some CacheEntries) -> [(key: String, entity: Entity)] {
        var result: [(key: String, entity: Entity)] = []
        entries.forEachValue(of: Entity.section) { key, value in
            if let object = value?.objectValue, let entity = Entity(json: object) { result.append((key, entity)) }
        }
        return result
    }

    /// The entries of one home account (ignoring case), in no particular order.
    ///
    /// - Complexity: O(k) in the number of that account's entries.
    func entries(homeAccountId: String, in tree: some CacheEntries) -> [(key: String, entity: Entity)] {
        parsed(byAccount[homeAccountId.lowercased()] ?? [], in: tree)
    }

    /// The entries whose `Entity.lookupField` equals `value` (ignoring case).
    func entries(lookupValue value: String, in tree: some CacheEntries) -> [(key: String, entity: Entity)] {
        parsed(byLookupField[value.lowercased()] ?? [], in: tree)
    }

    /// The entry stored under `key`, parsed.
    func entity(forKey key: String, in tree: some CacheEntries) -> Entity? {
        tree.member(key, of: Entity.section)?.objectValue.flatMap(Entity.init(json:))
    }

    /// The distinct lower-cased home account IDs, in no particular order.
    var homeAccountIds: Dictionary<String, [String]>.Keys { byAccount.keys }

    /// Stores `entity` under its MSAL key in `tree` (replacing what was there); returns the key.
    @discardableResult
    mutating func upsert(_ entity: Entity, in tree: JSONTree) -> String {
        let key = entity.cacheKey
        remove(key: key, in: tree)
        let json = entity.json
        tree.setMember(key, of: Entity.section, to: .object(json))
        add(
            key, home: json["home_account_id"]?.stringValue,
            lookup: Entity.lookupField.flatMap { json[$0]?.stringValue })
        return key
    }

    /// Removes the entry stored under `key` (its own key, whatever its format).
    mutating func remove(key: String, in tree: JSONTree) {
        guard let old = tree.member(key, of: Entity.section) else { return }
        tree.setMember(key, of: Entity.section, to: nil)
        if let home = old["home_account_id"]?.stringValue ?? Self.appHome { Self.unindex(key, home, from: &byAccount) }
        if let field = Entity.lookupField, let value = old[field]?.stringValue { Self.unindex(key, value, from: &byLookupField) }
    }

    private func parsed(_ keys: [String], in tree: some CacheEntries) -> [(key: String, entity: Entity)] {
        keys.compactMap { key in entity(forKey: key, in: tree).map { (key, $0) } }
    }

    /// The home account ID an entry without one is indexed under (``CacheEntity/appEntriesHaveNoHome``).
    private static var appHome: String? { Entity.appEntriesHaveNoHome ? "" : nil }

    private mutating func add(_ key: String, home: String?, lookup: String?) {
        if let home = home ?? Self.appHome { byAccount[Self.folded(home), default: []].append(key) }
        if let lookup { byLookupField[Self.folded(lookup), default: []].append(key) }
    }

    /// `value` lower-cased, without a new string when it has no upper-case ASCII letter and no
    /// non-ASCII byte (home account IDs: lower-case GUIDs), which is the common case at load.
    private static func folded(_ value: String) -> String {
        var value = value
        let plain = value.withUTF8 { bytes in !bytes.contains { $0 >= 0x80 || $0 &- 0x41 < 26 } }
        return plain ? value : value.lowercased()
    }

    private static func unindex(_ key: String, _ value: String, from index: inout [String: [String]]) {
        let folded = folded(value)
        index[folded]?.removeAll { $0 == key }
        if index[folded]?.isEmpty == true { index[folded] = nil }
    }
}

/// Where a section's entries are read from: the document's tree, or its scan.
protocol CacheEntries {
    /// The member `key` of the top-level object `section`, parsed.
    func member(_ key: String, of section: String) -> JSONValue?
    /// Each member of the top-level object `section` with its parsed value, in order.
    func forEachValue(of section: String, _ body: (String, JSONValue?) -> Void)
}

extension JSONTree: CacheEntries {
    func forEachValue(of section: String, _ body: (String, JSONValue?) -> Void) {
        forEachMember(of: section) { key, entry in body(key, entry.value) }
    }
}

extension JSONObjectIndex: CacheEntries {
    func forEachValue(of section: String, _ body: (String, JSONValue?) -> Void) {
        forEachMember(of: section, body)
    }
}
