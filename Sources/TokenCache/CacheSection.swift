import JSON

/// One top-level section of the cache document (`AccessToken`, `Account`, ...): the entries
/// exactly as read (so what this code does not touch is written back unchanged), their parsed
/// form, and an index by home account ID so a lookup reads only that account's entries.
struct CacheSection<Entity: CacheEntity>: Sendable {
    /// key -> entry, in file order; the source of truth written back.
    private(set) var raw: JSONObject
    private var parsed: [String: Entity] = [:]
    private var byAccount: [String: Set<String>] = [:]

    init(_ raw: JSONObject = JSONObject()) {
        self.raw = raw
        for (key, value) in raw {
            guard let object = value.objectValue, let entity = Entity(json: object) else { continue }
            add(entity, key: key)
        }
    }

    /// Every parsed entry with its key, in file order.
    var all: [(key: String, entity: Entity)] {
        raw.keys.compactMap { key in parsed[key].map { (key, $0) } }
    }

    /// The entries of one home account (case-insensitive), in no particular order.
    ///
    /// - Complexity: O(k) in the number of that account's entries.
    func entries(homeAccountId: String) -> [(key: String, entity: Entity)] {
        guard let keys = byAccount[homeAccountId.lowercased()] else { return [] }
        return keys.compactMap { key in parsed[key].map { (key, $0) } }
    }

    func entity(forKey key: String) -> Entity? { parsed[key] }

    /// Stores `entity` under its MSAL key (replacing what was there); returns the key.
    @discardableResult
    mutating func upsert(_ entity: Entity) -> String {
        let key = entity.cacheKey
        remove(key: key)
        raw[key] = .object(entity.json)
        add(entity, key: key)
        return key
    }

    /// Removes the entry stored under `key` (its own key, whatever its format).
    mutating func remove(key: String) {
        guard raw[key] != nil else { return }
        raw[key] = nil
        if let old = parsed.removeValue(forKey: key), let index = old.indexKey {
            byAccount[index]?.remove(key)
            if byAccount[index]?.isEmpty == true { byAccount[index] = nil }
        }
    }

    private mutating func add(_ entity: Entity, key: String) {
        parsed[key] = entity
        if let index = entity.indexKey { byAccount[index, default: []].insert(key) }
    }
}
