/// The token cache as the auth core sees it: accounts and tokens in MSAL's cross-SDK
/// format, over a ``TokenCacheStore``.
///
/// Every method is one store access: a read sees what other processes wrote (a sign-out
/// elsewhere) and costs one `stat` of the file when nothing changed; a change is one
/// transaction under the cross-process lock, on disk when the method returns. Lookups use
/// per-account indexes (no scan of the whole cache). Methods may block the calling thread
/// while another process holds the lock (bounded, 10 s by default), so call them from a
/// task, never from a latency-critical thread.
///
/// ```swift
/// let cache = TokenCache(store: FileTokenCacheStore(path: "/home/me/.cache/auth-sidecar/msal_cache.json"))
/// try cache.save(record)
/// let token = try cache.read {
///     $0.accessToken(
///         homeAccountId: id, environments: ["login.microsoftonline.com"], realm: tenant,
///         clientId: client, scopes: ScopeSet(["User.Read"]), keyId: nil)
/// }
/// ```
///
/// Lookups are ``CacheDocument``'s queries, run through ``read(_:)`` (one store access for
/// several of them) or on a ``snapshot()``.
///
/// Environments are lists of aliases of one cloud (`login.microsoftonline.com`,
/// `login.windows.net`, ...); IDs, hosts, tenants and scopes compare ignoring case.
public final class TokenCache: Sendable {
    /// Where the document lives.
    public let store: any TokenCacheStore
    /// How processes sharing the store take turns on a refresh.
    public let refreshLock: any RefreshLock
    /// Where the last failed refresh is kept (beside the cache, not in it).
    public let refreshErrors: any RefreshErrorLog

    public init(
        store: any TokenCacheStore, refreshLock: any RefreshLock = NoRefreshLock(),
        refreshErrors: any RefreshErrorLog = MemoryRefreshErrorLog()
    ) {
        self.store = store
        self.refreshLock = refreshLock
        self.refreshErrors = refreshErrors
    }

    /// The current document, to read several things from one consistent view at the cost of
    /// one read. Hold it briefly: a change while it is held copies the document.
    public func snapshot() throws -> CacheDocument {
        try store.read { $0 }
    }

    /// The current document when taking it costs no load and no wait (one `stat` of an
    /// unchanged file, none when it was checked after `checkedAfter`), else `nil`: see
    /// ``TokenCacheStore/readIfReady(checkedAfter:_:)``.
    public func snapshotIfReady(checkedAfter: UInt64? = nil) throws -> CacheDocument? {
        try store.readIfReady(checkedAfter: checkedAfter) { $0 }
    }

    /// Whether a read now costs at most a short read of a small local file
    /// (``TokenCacheStore/readsQuickly``).
    public var readsQuickly: Bool { store.readsQuickly }

    /// The current document's ``CacheDocument/stamp`` on the same terms as
    /// ``snapshotIfReady(checkedAfter:)`` (without copying the document).
    public func stampIfReady(checkedAfter: UInt64? = nil) throws -> UInt64? {
        try store.readIfReady(checkedAfter: checkedAfter) { $0.stamp }
    }

    /// Runs `body` on the current document, unchanged: several lookups from one consistent
    /// view at the cost of one (see ``CacheDocument``'s queries).
    public func read<T: Sendable>(_ body: (CacheDocument) throws -> T) throws -> T {
        try store.read(body)
    }

    /// Advances when another process changed the cache file (a sign-in or sign-out
    /// elsewhere); compare it with the one taken earlier. Never advances for a memory store.
    public func changeToken() throws -> CacheChangeToken {
        try store.changeToken()
    }
}
