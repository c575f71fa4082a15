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
/// let token = try cache.accessToken(homeAccountId: id, environments: ["login.microsoftonline.com"],
///                                   realm: tenant, clientId: client, scopes: ["User.Read"])
/// ```
///
/// Environments are lists of aliases of one cloud (`login.microsoftonline.com`,
/// `login.windows.net`, ...); IDs, hosts, tenants and scopes compare ignoring case.
public final class TokenCache: Sendable {
    /// Where the document lives.
    public let store: any TokenCacheStore
    /// How processes sharing the store take turns on a refresh.
    public let refreshLock: any RefreshLock

    public init(store: any TokenCacheStore, refreshLock: any RefreshLock = NoRefreshLock()) {
        self.store = store
        self.refreshLock = refreshLock
    }

    /// Every account in the cache (all clients, all environments), in file order.
    public func accounts() throws -> [CachedAccount] {
        try store.read { $0.accountList() }
    }

    /// The accounts whose username is `username` (ignoring case).
    public func accounts(username: String) throws -> [CachedAccount] {
        try store.read { $0.accounts(username: username) }
    }

    /// The current document, to read several things from one consistent view at the cost of
    /// one read. Hold it briefly: a change while it is held copies the document.
    public func snapshot() throws -> CacheDocument {
        try store.read { $0 }
    }

    /// Runs `body` on the current document, unchanged: several lookups from one consistent
    /// view at the cost of one (see ``CacheDocument``'s queries).
    public func read<T: Sendable>(_ body: (CacheDocument) throws -> T) throws -> T {
        try store.read(body)
    }

    /// The account entity for `homeAccountId` in one of `environments`: the one of `realm`
    /// when given, else the home tenant's (the part of the ID after the dot), else any.
    public func account(homeAccountId: String, environments: [String], realm: String? = nil) throws -> CachedAccount? {
        try store.read { $0.account(homeAccountId: homeAccountId, environments: environments, realm: realm) }
    }

    /// The access token of the account for `clientId` in `realm` whose scopes include all of
    /// `scopes` (ignoring case), the latest-expiring if several; expired ones are returned
    /// too (see ``CachedAccessToken/isExpired(at:margin:)``). Tokens bound to a key match only
    /// the same `keyId`.
    public func accessToken(
        homeAccountId: String, environments: [String], realm: String, clientId: String,
        scopes: [String], keyId: String? = nil
    ) throws -> CachedAccessToken? {
        try store.read {
            $0.accessToken(
                homeAccountId: homeAccountId, environments: environments, realm: realm,
                clientId: clientId, scopes: ScopeSet(scopes), keyId: keyId)
        }
    }

    /// The refresh token to redeem for the account: the client's own (newest), else a family
    /// refresh token of `familyId` (FOCI, `"1"`) written by another family client. Pass the
    /// family the client belongs to (``appMetadata(environments:clientId:)``), or `"1"` to
    /// try the family when that is unknown, as MSAL does.
    public func refreshToken(
        homeAccountId: String, environments: [String], clientId: String, familyId: String? = nil
    ) throws -> CachedRefreshToken? {
        try refreshTokens(
            homeAccountId: homeAccountId, environments: environments,
            clientId: clientId, familyId: familyId
        ).first
    }

    /// All the refresh tokens ``refreshToken(homeAccountId:environments:clientId:familyId:)``
    /// chooses from, best first (to try the next when one is rejected).
    public func refreshTokens(
        homeAccountId: String, environments: [String], clientId: String, familyId: String? = nil
    ) throws -> [CachedRefreshToken] {
        try store.read {
            $0.refreshTokens(
                homeAccountId: homeAccountId, environments: environments,
                clientId: clientId, familyId: familyId)
        }
    }

    /// The ID token of the account for `clientId` in `realm`.
    public func idToken(homeAccountId: String, environments: [String], realm: String, clientId: String) throws -> CachedIdToken? {
        try store.read {
            $0.idToken(homeAccountId: homeAccountId, environments: environments, realm: realm, clientId: clientId)
        }
    }

    /// What the cache knows of the client (its family).
    public func appMetadata(environments: [String], clientId: String) throws -> AppMetadata? {
        try store.read { $0.appMetadata(environments: environments, clientId: clientId) }
    }

    /// Advances when another process changed the cache file (a sign-in or sign-out
    /// elsewhere); compare it with the one taken earlier. Never advances for a memory store.
    public func changeToken() throws -> CacheChangeToken {
        try store.changeToken()
    }
}
