import JSON

/// Changes to a document; each marks it changed (``CacheDocument/touch()``) when it did
/// change something.
extension CacheDocument {
    /// Writes a token response as MSAL does: account, ID token, refresh token (rotated),
    /// app metadata, and the access token after removing the account's access tokens for the
    /// same environment, realm, client and key id whose scopes intersect the new ones. Bound
    /// tokens (a key id) of other keys stay (each key its own entry, ``CacheKeys``) until they
    /// expire: a write removes the client's expired ones, which no other SDK would.
    mutating func save(_ record: TokenResponseRecord) {
        let scopes = ScopeSet(record.scopes)
        let home = record.homeAccountId
        if let secret = record.accessToken {
            for (key, old) in entries(accessTokens, homeAccountId: home)
            where CacheEnvironment.same(old.environment, record.environment)
                && old.clientId.equalsIgnoringCase(record.clientId) && !old.hasExtendedCacheKey
                && ((old.realm.equalsIgnoringCase(record.realm) && old.keyId == record.keyId
                    && old.scopes.intersects(scopes))
                    || (old.keyId != nil && old.expiresOn < record.cachedAt))
            {
                change(\.accessTokens) { $0.remove(key: key, in: $1) }
            }
            let token = CachedAccessToken(
                homeAccountId: home, environment: record.environment, clientId: record.clientId,
                realm: record.realm, target: scopes.target, secret: secret, cachedAt: record.cachedAt,
                expiresOn: record.expiresOn, extendedExpiresOn: record.extendedExpiresOn,
                refreshOn: record.refreshOn, tokenType: record.tokenType, keyId: record.keyId)
            change(\.accessTokens) { $0.upsert(token, in: $1) }
        }
        if record.createsAccount {
            var account = CachedAccount(
                homeAccountId: home, environment: record.environment, realm: record.realm,
                localAccountId: record.localAccountId, username: record.username, name: record.name,
                authorityType: record.authorityType, clientInfo: record.clientInfo,
                accountSource: record.accountSource)
            if let old = entity(accounts, forKey: account.cacheKey) {  // keep what others wrote
                account.additionalFields = old.additionalFields
                account.name = account.name ?? old.name
                account.clientInfo = account.clientInfo ?? old.clientInfo
                account.accountSource = account.accountSource ?? old.accountSource
            }
            change(\.accounts) { $0.upsert(account, in: $1) }
        }
        if let secret = record.idToken {
            let idToken = CachedIdToken(
                homeAccountId: home, environment: record.environment, realm: record.realm,
                clientId: record.clientId, secret: secret)
            removeIdTokens(
                homeAccountId: home, environments: [record.environment], clientId: record.clientId,
                realm: record.realm)
            change(\.idTokens) { $0.upsert(idToken, in: $1) }
        }
        if let secret = record.refreshToken {  // rotation: the client's previous RTs go
            for (key, old) in entries(refreshTokens, homeAccountId: home)
            where CacheEnvironment.same(old.environment, record.environment)
                && old.clientId.equalsIgnoringCase(record.clientId)
            {
                change(\.refreshTokens) { $0.remove(key: key, in: $1) }
            }
            let token = CachedRefreshToken(
                homeAccountId: home, environment: record.environment, clientId: record.clientId,
                secret: secret, familyId: record.familyId, target: scopes.target,
                lastModificationTime: record.cachedAt)
            change(\.refreshTokens) { $0.upsert(token, in: $1) }
        }
        var metadata = AppMetadata(
            clientId: record.clientId, environment: record.environment,
            familyId: record.familyId)
        if let old = entity(appMetadata, forKey: metadata.cacheKey) {
            metadata.additionalFields = old.additionalFields
        }
        change(\.appMetadata) { $0.upsert(metadata, in: $1) }
        touch()
    }

    /// Removes the account's access tokens, ID tokens and refresh tokens of `clientId` (and
    /// the family refresh tokens when the client is a family member, or `familyId` is
    /// given), its account entities, and clears it as the client's current account.
    ///
    /// - Returns: how many entries were removed.
    mutating func removeAccount(
        homeAccountId home: String, environments: [String], clientId: String,
        familyId: String?
    ) -> Int {
        let family = familyId ?? appMetadata(environments: environments, clientId: clientId)?.familyId
        var removed = 0
        func mine(_ environment: String, _ client: String) -> Bool {
            environments.containsEnvironment(environment) && client.equalsIgnoringCase(clientId)
        }
        for (key, token) in entries(accessTokens, homeAccountId: home) where mine(token.environment, token.clientId) {
            change(\.accessTokens) { $0.remove(key: key, in: $1) }
            removed += 1
        }
        for (key, token) in entries(refreshTokens, homeAccountId: home)
        where mine(token.environment, token.clientId)
            || (environments.containsEnvironment(token.environment)
                && family.map { !$0.isEmpty && token.familyId == $0 } == true)
        {
            change(\.refreshTokens) { $0.remove(key: key, in: $1) }
            removed += 1
        }
        removed += removeIdTokens(homeAccountId: home, environments: environments, clientId: clientId, realm: nil)
        for (key, account) in entries(accounts, homeAccountId: home)
        where environments.containsEnvironment(account.environment) {
            change(\.accounts) { $0.remove(key: key, in: $1) }
            removed += 1
        }
        if let current = currentAccountId(clientId: clientId), current.equalsIgnoringCase(home) {
            setCurrentAccountId(nil, clientId: clientId)
        }
        if removed > 0 { touch() }
        return removed
    }

    /// Removes refresh tokens with this secret (a revoked or rejected one).
    mutating func removeRefreshToken(_ token: CachedRefreshToken) -> Bool {
        let matches = entries(refreshTokens, homeAccountId: token.homeAccountId)
            .filter { $0.entity.secret == token.secret && $0.entity.clientId.equalsIgnoringCase(token.clientId) }
        for (key, _) in matches { change(\.refreshTokens) { $0.remove(key: key, in: $1) } }
        if !matches.isEmpty { touch() }
        return !matches.isEmpty
    }

    /// Marks `homeAccountId` as the client's current account (`nil`: none).
    mutating func setCurrentAccountId(_ homeAccountId: String?, clientId: String) {
        setSidecarEntry("current_account", clientId, to: homeAccountId.map { .string($0) })
    }

    /// Records (or with `nil` forgets) a snapshot of the account the client last signed out.
    mutating func setSignedOutAccount(_ snapshot: JSONObject?, clientId: String) {
        setSidecarEntry("signed_out_account", clientId, to: snapshot.map { .object($0) })
    }

    /// Sets (or with `nil` removes) `AuthSidecar.{group}.{key}`; marks the document changed
    /// only when that changed it.
    mutating func setSidecarEntry(_ group: String, _ key: String, to value: JSONValue?) {
        guard sidecarState[group]?[key] != value else { return }
        var state = sidecarState
        var entries = state[group]?.objectValue ?? JSONObject()
        entries[key] = value
        state[group] = .object(entries)
        sidecarState = state
        touch()
    }

    @discardableResult
    private mutating func removeIdTokens(
        homeAccountId: String, environments: [String], clientId: String,
        realm: String?
    ) -> Int {
        var removed = 0
        for (key, token) in entries(idTokens, homeAccountId: homeAccountId)
        where environments.containsEnvironment(token.environment) && token.clientId.equalsIgnoringCase(clientId)
            && realm.map(token.realm.equalsIgnoringCase) ?? true
        {
            change(\.idTokens) { $0.remove(key: key, in: $1) }
            removed += 1
        }
        return removed
    }
}
