import JSON

/// Lookups over a document, through its per-account indexes: each reads only the entries of
/// one account (or one username), whatever the size of the cache.
extension CacheDocument {
    /// What the cache holds for `clientId`, without a secret (O(n): for `status`): each access
    /// token's account, tenant, scopes and expiry, and the home accounts with a refresh token
    /// this client may redeem (its own, or a family's).
    public func inventory(clientId: String) -> CacheInventory {
        let tokens = all(accessTokens).map(\.entity).filter { $0.clientId.equalsIgnoringCase(clientId) }
            .map { CacheInventory.AccessToken(homeAccountId: $0.homeAccountId, tenant: $0.realm, scopes: $0.scopes.scopes, expiresOn: $0.expiresOn) }
            .sorted { ($0.homeAccountId, $0.expiresOn) < ($1.homeAccountId, $1.expiresOn) }
        var refreshable = Set<String>()
        for token in all(refreshTokens).map(\.entity) where token.clientId.equalsIgnoringCase(clientId) || token.familyId?.isEmpty == false {
            refreshable.insert(token.homeAccountId)
        }
        return CacheInventory(accessTokens: tokens, refreshTokenAccounts: refreshable)
    }

    /// Every account entity, in file order (O(n): for listings).
    public func accountList() -> [CachedAccount] { all(accounts).map(\.entity) }

    /// The account entities of one home account (ignoring case), ordered by key.
    public func accounts(homeAccountId: String) -> [CachedAccount] {
        entries(accounts, homeAccountId: homeAccountId).map(\.entity).sorted { $0.cacheKey < $1.cacheKey }
    }

    /// The account entities whose username is `username` (ignoring case), ordered by key.
    public func accounts(username: String) -> [CachedAccount] {
        entries(accounts, lookupValue: username).map(\.entity).sorted { $0.cacheKey < $1.cacheKey }
    }

    /// Up to `limit` distinct home account IDs (lower-cased) having an account entity in one
    /// of `environments`: enough to tell "none", "exactly one" and "several" without reading
    /// every account.
    public func homeAccountIds(environments: [String], limit: Int) -> [String] {
        var found: [String] = []
        for home in accounts.homeAccountIds {
            if found.count >= limit { break }
            if entries(accounts, homeAccountId: home).contains(where: { environments.containsEnvironment($0.entity.environment) }) {
                found.append(home)
            }
        }
        return found
    }

    /// The account entity of `homeAccountId` in one of `environments`: the one of `realm`
    /// when given, else the home tenant's (the part of the ID after the dot), else any.
    public func account(homeAccountId: String, environments: [String], realm: String?) -> CachedAccount? {
        let candidates = entries(accounts, homeAccountId: homeAccountId)
            .map(\.entity)
            .filter { environments.containsEnvironment($0.environment) }
            .sorted { $0.cacheKey < $1.cacheKey }
        if let realm {
            return candidates.first { $0.realm.equalsIgnoringCase(realm) }
        }
        // Prefer the home tenant (the part of the home account ID after the dot).
        let homeTenant = homeAccountId.utf8.split(separator: UInt8(ascii: ".")).dropFirst().first.map { String(Substring($0)) }
        return candidates.first { homeTenant.map($0.realm.equalsIgnoringCase) ?? false }
            ?? candidates.first
    }

    /// The access token of the account for `clientId` in `realm` whose scopes include all of
    /// `scopes`, the latest-expiring if several; expired ones too. Bound tokens match only
    /// the same `keyId`.
    public func accessToken(
        homeAccountId: String, environments: [String], realm: String, clientId: String,
        scopes: ScopeSet, keyId: String?
    ) -> CachedAccessToken? {
        entries(accessTokens, homeAccountId: homeAccountId)
            .map(\.entity)
            .filter {
                !$0.hasExtendedCacheKey && $0.keyId == keyId
                    && environments.containsEnvironment($0.environment)
                    && $0.realm.equalsIgnoringCase(realm) && $0.clientId.equalsIgnoringCase(clientId)
                    && $0.scopes.isSuperset(of: scopes)
            }
            .max { ($0.expiresOn, $1.cacheKey) < ($1.expiresOn, $0.cacheKey) }
    }

    /// The refresh tokens a silent request of `clientId` tries for the account, best first:
    /// the client's own, then the family's of the client's family per its app metadata, or of
    /// family `"1"` when the client's family status is unknown (as MSAL does).
    public func refreshTokensToTry(homeAccountId: String, environments: [String], clientId: String) -> [CachedRefreshToken] {
        let metadata = appMetadata(environments: environments, clientId: clientId)
        return refreshTokens(
            homeAccountId: homeAccountId, environments: environments, clientId: clientId,
            familyId: metadata == nil ? "1" : metadata?.familyId)
    }

    /// The refresh tokens usable by `clientId` for the account, best first: the client's own
    /// (newest first), then family tokens of `familyId` (newest first).
    public func refreshTokens(
        homeAccountId: String, environments: [String], clientId: String, familyId: String?
    ) -> [CachedRefreshToken] {
        let mine = entries(refreshTokens, homeAccountId: homeAccountId)
            .map(\.entity)
            .filter { environments.containsEnvironment($0.environment) }
        func newestFirst(_ a: CachedRefreshToken, _ b: CachedRefreshToken) -> Bool {
            ((a.lastModificationTime ?? 0), b.cacheKey) > ((b.lastModificationTime ?? 0), a.cacheKey)
        }
        let own = mine.filter { $0.clientId.equalsIgnoringCase(clientId) }.sorted(by: newestFirst)
        guard let familyId, !familyId.isEmpty else { return own }
        let family = mine.filter { !$0.clientId.equalsIgnoringCase(clientId) && $0.familyId == familyId }
            .sorted(by: newestFirst)
        return own + family
    }

    /// The ID token of the account for `clientId` in `realm` (`nil`: in any realm).
    public func idToken(homeAccountId: String, environments: [String], realm: String?, clientId: String) -> CachedIdToken? {
        entries(idTokens, homeAccountId: homeAccountId)
            .map(\.entity)
            .filter {
                environments.containsEnvironment($0.environment) && (realm.map($0.realm.equalsIgnoringCase) ?? true)
                    && $0.clientId.equalsIgnoringCase(clientId)
            }
            .min { $0.cacheKey < $1.cacheKey }
    }

    /// The account's ID tokens in one of `environments`, of any client and realm, ordered by key.
    public func idTokens(homeAccountId: String, environments: [String]) -> [CachedIdToken] {
        entries(idTokens, homeAccountId: homeAccountId).map(\.entity)
            .filter { environments.containsEnvironment($0.environment) }
            .sorted { $0.cacheKey < $1.cacheKey }
    }

    /// The realms of the account's access tokens in one of `environments` (any client), each
    /// once (ignoring case), in key order.
    public func accessTokenRealms(homeAccountId: String, environments: [String]) -> [String] {
        var seen = Set<String>()
        return entries(accessTokens, homeAccountId: homeAccountId).map(\.entity)
            .filter { environments.containsEnvironment($0.environment) }
            .sorted { $0.cacheKey < $1.cacheKey }
            .map(\.realm)
            .filter { seen.insert($0.lowercased()).inserted }
    }

    /// What the cache knows of the client (its family).
    public func appMetadata(environments: [String], clientId: String) -> AppMetadata? {
        for environment in environments {
            let key = CacheKeys.appMetadata(environment: environment, clientId: clientId)
            if let found = entity(appMetadata, forKey: key) { return found }
        }
        return all(appMetadata).map(\.entity).first {
            $0.clientId.equalsIgnoringCase(clientId) && environments.containsEnvironment($0.environment)
        }
    }

    /// The snapshot of the account `clientId` last signed out, not yet reported.
    public func signedOutAccount(clientId: String) -> JSONObject? {
        sidecarState["signed_out_account"]?[clientId]?.objectValue
    }

    /// The home account ID the sidecar marked current for `clientId`.
    public func currentAccountId(clientId: String) -> String? {
        sidecarState["current_account"]?[clientId]?.stringValue
    }
}
