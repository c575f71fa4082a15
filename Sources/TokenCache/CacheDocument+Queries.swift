import JSON
/// Lookups over a document, through its per-account indexes.
extension CacheDocument {
    func accountList() -> [CachedAccount] { accounts.all.map(\.entity) }

    func account(homeAccountId: String, environments: [String], realm: String?) -> CachedAccount? {
        let candidates = accounts.entries(homeAccountId: homeAccountId)
            .map(\.entity)
            .filter { environments.containsIgnoringCase($0.environment) }
            .sorted { $0.cacheKey < $1.cacheKey }
        if let realm {
            return candidates.first { $0.realm.equalsIgnoringCase(realm) }
        }
        // Prefer the home tenant (the part of the home account ID after the dot).
        let homeTenant = homeAccountId.split(separator: ".").dropFirst().first.map(String.init)
        return candidates.first { homeTenant.map($0.realm.equalsIgnoringCase) ?? false }
            ?? candidates.first
    }

    func accessToken(
        homeAccountId: String, environments: [String], realm: String, clientId: String,
        scopes: ScopeSet, keyId: String?
    ) -> CachedAccessToken? {
        accessTokens.entries(homeAccountId: homeAccountId)
            .map(\.entity)
            .filter {
                !$0.hasExtendedCacheKey && $0.keyId == keyId
                    && environments.containsIgnoringCase($0.environment)
                    && $0.realm.equalsIgnoringCase(realm) && $0.clientId.equalsIgnoringCase(clientId)
                    && $0.scopes.isSuperset(of: scopes)
            }
            .max { ($0.expiresOn, $1.cacheKey) < ($1.expiresOn, $0.cacheKey) }
    }

    /// The refresh tokens usable by `clientId` for the account, best first: the client's own
    /// (newest first), then family tokens of `familyId` (newest first).
    func refreshTokens(
        homeAccountId: String, environments: [String], clientId: String, familyId: String?
    ) -> [CachedRefreshToken] {
        let mine = refreshTokens.entries(homeAccountId: homeAccountId)
            .map(\.entity)
            .filter { environments.containsIgnoringCase($0.environment) }
        func newestFirst(_ a: CachedRefreshToken, _ b: CachedRefreshToken) -> Bool {
            ((a.lastModificationTime ?? 0), b.cacheKey) > ((b.lastModificationTime ?? 0), a.cacheKey)
        }
        let own = mine.filter { $0.clientId.equalsIgnoringCase(clientId) }.sorted(by: newestFirst)
        guard let familyId, !familyId.isEmpty else { return own }
        let family = mine.filter { !$0.clientId.equalsIgnoringCase(clientId) && $0.familyId == familyId }
            .sorted(by: newestFirst)
        return own + family
    }

    func idToken(homeAccountId: String, environments: [String], realm: String, clientId: String) -> CachedIdToken? {
        idTokens.entries(homeAccountId: homeAccountId)
            .map(\.entity)
            .filter {
                environments.containsIgnoringCase($0.environment) && $0.realm.equalsIgnoringCase(realm)
                    && $0.clientId.equalsIgnoringCase(clientId)
            }
            .min { $0.cacheKey < $1.cacheKey }
    }

    func appMetadata(environments: [String], clientId: String) -> AppMetadata? {
        for environment in environments {
            let key = CacheKeys.appMetadata(environment: environment, clientId: clientId)
            if let found = appMetadata.entity(forKey: key) { return found }
        }
        return appMetadata.all.map(\.entity).first {
            $0.clientId.equalsIgnoringCase(clientId) && environments.containsIgnoringCase($0.environment)
        }
    }

    /// The snapshot of the account `clientId` last signed out, not yet reported.
    func signedOutAccount(clientId: String) -> JSONObject? {
        sidecarState["signed_out_account"]?[clientId]?.objectValue
    }

    /// The home account ID the sidecar marked current for `clientId`.
    func currentAccountId(clientId: String) -> String? {
        sidecarState["current_account"]?[clientId]?.stringValue
    }
}
