/// What a cache holds for one client, without a secret: what `status` shows
/// (``CacheDocument/inventory(clientId:)``).
public struct CacheInventory: Sendable, Equatable {
    /// One cached access token: never its value.
    public struct AccessToken: Sendable, Equatable {
        public var homeAccountId: String
        public var tenant: String
        public var scopes: [String]
        public var expiresOn: Int64

        public init(homeAccountId: String, tenant: String, scopes: [String], expiresOn: Int64) {
            self.homeAccountId = homeAccountId
            self.tenant = tenant
            self.scopes = scopes
            self.expiresOn = expiresOn
        }
    }

    /// The access tokens, by account then expiry.
    public var accessTokens: [AccessToken]
    /// Home account IDs with a refresh token of this client (or its family).
    public var refreshTokenAccounts: Set<String>

    public init(accessTokens: [AccessToken] = [], refreshTokenAccounts: Set<String> = []) {
        self.accessTokens = accessTokens
        self.refreshTokenAccounts = refreshTokenAccounts
    }
}
