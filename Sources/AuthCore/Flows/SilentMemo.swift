import Synchronization

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
        var entries: [String: SilentFlow.Found] = [:]
    }

    private let state = Mutex(State())

    /// The key of a request's shape: account reference, authority and scopes.
    static func key(_ reference: AccountReference?, authority: Authority, scopes: [String]) -> String {
        let account: String
        switch reference {
        case .homeAccountId(let id)?: account = "home:" + id.lowercased()
        case .username(let name)?: account = "user:" + name.lowercased()
        case nil: account = "current"
        }
        let scopeList: [String] = scopes.map { $0.lowercased() }.sorted()
        return account + "|" + authority.url.lowercased() + "|" + scopeList.joined(separator: " ")
    }

    func lookup(_ key: String, stamp: UInt64) -> SilentFlow.Found? {
        state.withLock { $0.stamp == stamp ? $0.entries[key] : nil }
    }

    func store(_ found: SilentFlow.Found, forKey key: String, stamp: UInt64) {
        state.withLock { state in
            if state.stamp != stamp || state.entries.count >= Self.capacity { state = State(stamp: stamp) }
            state.entries[key] = found
        }
    }
}
