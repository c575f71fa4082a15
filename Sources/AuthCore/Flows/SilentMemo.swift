import POSIXSupport

/// What silent requests found in one version of the cache (its ``TokenCache/CacheDocument``
/// stamp): the next identical request reuses the account and token instead of reading and
/// decoding them again (the ID token's claims, the entries). Any change to the cache, here or
/// in another process, gives the document a new stamp, which empties the memo. Callers still
/// check the token's expiry against the clock.
final class SilentMemo: Sendable {
    /// At most this many request shapes are remembered per cache version.
    static let capacity = 256

    private struct State {
        var stamp: UInt64 = 0
        var entries: [String: Entry] = [:]
    }

    /// What a request shape found, kept by reference: a lookup hands it out without copying
    /// the account and token.
    final class Entry: Sendable {
        let found: SilentFlow.Found
        init(_ found: SilentFlow.Found) { self.found = found }
    }

    /// A pthread mutex, not `Synchronization.Mutex`: silent requests look up and store here from
    /// several tasks at once with no suspension between, and ThreadSanitizer sees only the
    /// former's lock (``PthreadMutex``).
    private let state = PthreadMutex(State())

    /// The key of a request's shape: account reference, authority, scopes and the key bound.
    static func key(_ reference: AccountReference?, authority: Authority, scopes: [String], binding: TokenBinding? = nil) -> String {
        let account: String
        switch reference {
        case .homeAccountId(let id)?: account = "home:" + id.lowercased()
        case .username(let name)?: account = "user:" + name.lowercased()
        case nil: account = "current"
        }
        var key = account + "|"
        if let binding { key += binding.tokenType + ":" + binding.keyId + "|" }
        key += authority.url.lowercased() + "|"
        if scopes.count == 1, let scope = scopes.first {
            key += scope.lowercased()
        } else {
            key += scopes.map { $0.lowercased() }.sorted().joined(separator: " ")
        }
        return key
    }

    func lookup(_ key: String, stamp: UInt64) -> Entry? {
        state.withLock { $0.stamp == stamp ? $0.entries[key] : nil }
    }

    /// The answer for `key` in the cache version `stamp` when one is kept and its token is good
    /// for 5 more minutes at `now` and not due for a proactive refresh (`refresh_on`): what
    /// ``SilentFlow`` would return from the cache.
    func answer(_ key: String, stamp: UInt64, now: Int64) -> CachedSilentAnswer? {
        guard let entry = lookup(key, stamp: stamp), entry.found.account != nil, let cached = entry.found.cached,
            !SSHKeyBinding.isDue(cached.token, at: now), !cached.token.needsRefresh(at: now)
        else { return nil }
        return CachedSilentAnswer(identity: .init(stamp: stamp, key: key), result: cached.result)
    }

    func store(_ found: SilentFlow.Found, forKey key: String, stamp: UInt64) {
        state.withLock { state in
            if state.stamp != stamp || state.entries.count >= Self.capacity { state = State(stamp: stamp) }
            state.entries[key] = Entry(found)
        }
    }
}
