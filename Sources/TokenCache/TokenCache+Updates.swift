import JSON

extension TokenCache {
    /// Writes a token response in one atomic update: the account (unless
    /// ``TokenResponseRecord/createsAccount`` is false), the ID token, the app metadata, the
    /// refresh token (replacing the client's previous ones for the account: rotation) and the
    /// access token, after removing the account's access tokens for the same environment,
    /// realm and client whose scopes intersect the new ones (as MSAL.NET, MSAL for
    /// iOS/macOS and MSAL.js do; MSAL for Python only overwrites the same scopes).
    public func save(_ record: TokenResponseRecord) throws {
        try store.transaction { $0.save(record) }
    }

    /// Signs the account out of `clientId`: removes its access tokens, ID tokens and refresh
    /// tokens for the client, the family refresh tokens when the client is a family member
    /// (per its app metadata, or `familyId`), and the account entities (as MSAL for Python's
    /// `remove_account`); clears it as the client's current account.
    ///
    /// - Returns: how many entries were removed (0: the account was not in the cache).
    @discardableResult
    public func removeAccount(
        homeAccountId: String, environments: [String], clientId: String,
        familyId: String? = nil
    ) throws -> Int {
        try store.transaction {
            $0.removeAccount(
                homeAccountId: homeAccountId, environments: environments,
                clientId: clientId, familyId: familyId)
        }
    }

    /// Removes a refresh token the service rejected as revoked or expired.
    ///
    /// - Returns: whether it was in the cache.
    @discardableResult
    public func removeRefreshToken(_ token: CachedRefreshToken) throws -> Bool {
        try store.transaction { $0.removeRefreshToken(token) }
    }

    /// The home account ID the sidecar marked current for `clientId` (kept in the cache
    /// document under `AuthSidecar`, so every process sharing the cache agrees).
    public func currentAccountId(clientId: String) throws -> String? {
        try store.read { $0.currentAccountId(clientId: clientId) }
    }

    /// Marks the current account of `clientId` (`nil`: none). Writes only if it changed.
    public func setCurrentAccountId(_ homeAccountId: String?, clientId: String) throws {
        try store.transaction { $0.setCurrentAccountId(homeAccountId, clientId: clientId) }
    }

    /// Keeps a snapshot of an account just signed out (opaque to the cache), so that the
    /// next `getCurrentAccount`, in any process, can report it as the previous account.
    public func setSignedOutAccount(_ snapshot: JSONObject?, clientId: String) throws {
        try store.transaction { $0.setSignedOutAccount(snapshot, clientId: clientId) }
    }

    /// Returns the signed-out account's snapshot and forgets it (it is reported once).
    public func takeSignedOutAccount(clientId: String) throws -> JSONObject? {
        try store.transaction { document in
            defer { document.setSignedOutAccount(nil, clientId: clientId) }
            return document.signedOutAccount(clientId: clientId)
        }
    }
}

/// Discovery answers (OIDC metadata, instance-discovery aliases) kept in the cache document's
/// `AuthSidecar.discovery` object, so a fresh process needs no network for them. The records
/// are opaque to the cache; the auth core decides what is in them and whether one is fresh.
extension TokenCache {
    /// The discovery record stored under `key`, if any.
    public func discoveryRecord(_ key: String) throws -> JSONObject? {
        try store.read { $0.discoveryRecord(key) }
    }

    /// Stores a discovery record under `key` (one transaction).
    public func saveDiscoveryRecord(_ record: JSONObject, forKey key: String) throws {
        try saveDiscoveryRecord(record, forKeys: [key])
    }

    /// Stores one discovery record under each of `keys` (one transaction).
    public func saveDiscoveryRecord(_ record: JSONObject, forKeys keys: [String]) throws {
        try store.transaction { document in
            for key in keys { document.setDiscoveryRecord(record, forKey: key) }
        }
    }
}

extension CacheDocument {
    /// The discovery record stored under `key`, if any.
    public func discoveryRecord(_ key: String) -> JSONObject? {
        sidecarState["discovery"]?[key]?.objectValue
    }

    /// Stores (or with `nil` removes) the discovery record under `key`.
    mutating func setDiscoveryRecord(_ record: JSONObject?, forKey key: String) {
        setSidecarEntry("discovery", key, to: record.map { .object($0) })
    }
}
