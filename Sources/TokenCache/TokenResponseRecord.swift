/// What a successful token response puts in the cache, already interpreted by the auth
/// core (client_info decoded, ID token claims read, times made absolute).
///
/// ``TokenCache/save(_:)`` writes it in one atomic update, the way MSAL for Python's
/// `TokenCache.add` does.
public struct TokenResponseRecord: Sendable, Hashable {
    public var clientId: String
    /// The authority host the token came from (`login.microsoftonline.com`).
    public var environment: String
    /// The tenant (`tid`, else the authority's tenant).
    public var realm: String
    /// `{uid}.{utid}` from `client_info`.
    public var homeAccountId: String
    /// `oid` (else `sub`) from the ID token.
    public var localAccountId: String
    /// `preferred_username` (else `upn`); `""` when unknown.
    public var username: String
    public var name: String?
    /// `"MSSTS"` (Entra ID, personal accounts, B2C) or `"ADFS"`.
    public var authorityType: String
    public var clientInfo: String?
    /// The grant that established the account (`authorization_code`, `device_code`).
    public var accountSource: String?
    /// `false` for a silent refresh: the account entity is then not (re)created, so a
    /// concurrent sign-out is honoured (MSAL's `skip_account_creation`).
    public var createsAccount: Bool
    /// The granted scopes (the response's `scope`, else the requested ones).
    public var scopes: [String]
    public var accessToken: String?
    public var tokenType: String?
    public var keyId: String?
    /// When the response arrived (Unix seconds).
    public var cachedAt: Int64
    public var expiresOn: Int64
    public var extendedExpiresOn: Int64?
    public var refreshOn: Int64?
    public var refreshToken: String?
    /// The raw ID token (JWT).
    public var idToken: String?
    /// The response's `foci` (`"1"` for a family client).
    public var familyId: String?

    public init(
        clientId: String, environment: String, realm: String, homeAccountId: String,
        localAccountId: String, username: String, name: String? = nil,
        authorityType: String = "MSSTS", clientInfo: String? = nil, accountSource: String? = nil,
        createsAccount: Bool = true, scopes: [String], accessToken: String?,
        tokenType: String? = "Bearer", keyId: String? = nil, cachedAt: Int64, expiresOn: Int64,
        extendedExpiresOn: Int64? = nil, refreshOn: Int64? = nil, refreshToken: String? = nil,
        idToken: String? = nil, familyId: String? = nil
    ) {
        self.clientId = clientId
        self.environment = environment
        self.realm = realm
        self.homeAccountId = homeAccountId
        self.localAccountId = localAccountId
        self.username = username
        self.name = name
        self.authorityType = authorityType
        self.clientInfo = clientInfo
        self.accountSource = accountSource
        self.createsAccount = createsAccount
        self.scopes = scopes
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.keyId = keyId
        self.cachedAt = cachedAt
        self.expiresOn = expiresOn
        self.extendedExpiresOn = extendedExpiresOn
        self.refreshOn = refreshOn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.familyId = familyId
    }
}
