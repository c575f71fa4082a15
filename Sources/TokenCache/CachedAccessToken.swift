import JSON

/// An access token entity (section `AccessToken`), as MSAL for Python writes it.
///
/// Times are Unix seconds (written as strings). Whether the token is still usable is the
/// caller's judgement (it owns the clock); see ``isExpired(at:margin:)``.
public struct CachedAccessToken: Sendable, Hashable {
    public var homeAccountId: String
    public var environment: String
    public var clientId: String
    public var realm: String
    /// The granted scopes, space-separated, as stored (see ``ScopeSet/target``).
    public var target: String
    /// The token itself.
    public var secret: String
    public var cachedAt: Int64
    public var expiresOn: Int64
    public var extendedExpiresOn: Int64
    /// When to renew proactively (`refresh_in` from the service), if given.
    public var refreshOn: Int64?
    /// `Bearer` unless the token is bound (`pop`, `ssh-cert`).
    public var tokenType: String?
    /// The key a bound token belongs to.
    public var keyId: String?
    public var additionalFields: JSONObject

    public init(
        homeAccountId: String, environment: String, clientId: String, realm: String,
        target: String, secret: String, cachedAt: Int64, expiresOn: Int64,
        extendedExpiresOn: Int64? = nil, refreshOn: Int64? = nil, tokenType: String? = "Bearer",
        keyId: String? = nil, additionalFields: JSONObject = JSONObject()
    ) {
        self.homeAccountId = homeAccountId
        self.environment = environment
        self.clientId = clientId
        self.realm = realm
        self.target = target
        self.secret = secret
        self.cachedAt = cachedAt
        self.expiresOn = expiresOn
        self.extendedExpiresOn = extendedExpiresOn ?? expiresOn
        self.refreshOn = refreshOn
        self.tokenType = tokenType
        self.keyId = keyId
        self.additionalFields = additionalFields
    }

    /// The scopes of ``target``.
    public var scopes: ScopeSet { ScopeSet(target: target) }

    /// Whether the token expires within `margin` seconds of `now` (MSAL uses 5 minutes).
    public func isExpired(at now: Int64, margin: Int64 = 300) -> Bool {
        expiresOn - margin <= now
    }

    /// Whether the service asked for a proactive renewal by `now` (`refresh_on` passed).
    public func needsRefresh(at now: Int64) -> Bool {
        refreshOn.map { $0 <= now } ?? false
    }

    /// Whether the entry belongs to an extended cache key (MSAL's FMI isolation); such tokens
    /// never answer an ordinary lookup.
    var hasExtendedCacheKey: Bool { additionalFields["ext_cache_key"] != nil }
}

extension CachedAccessToken: CacheEntity {
    static let section = CacheKeys.Section.accessToken
    static let appEntriesHaveNoHome = true
    private static let known: Set<String> = [
        "credential_type", "secret", "home_account_id", "environment", "client_id", "target",
        "realm", "token_type", "cached_at", "expires_on", "extended_expires_on", "refresh_on",
        "key_id",
    ]

    init?(json: JSONObject) {
        let fields = CacheFields(json)
        guard let secret = fields.string("secret"), let environment = fields.string("environment"),
            let clientId = fields.string("client_id"), let expiresOn = fields.time("expires_on")
        else { return nil }
        self.init(
            homeAccountId: fields.string("home_account_id") ?? "", environment: environment,
            clientId: clientId, realm: fields.string("realm") ?? "",
            target: fields.string("target") ?? "", secret: secret,
            cachedAt: fields.time("cached_at") ?? 0, expiresOn: expiresOn,
            extendedExpiresOn: fields.time("extended_expires_on"),
            refreshOn: fields.time("refresh_on"), tokenType: fields.string("token_type"),
            keyId: fields.string("key_id"), additionalFields: fields.remaining(excluding: Self.known))
    }

    var json: JSONObject {
        var fields = CacheFields()
        // msal-common's credential type for a token with an authentication scheme (PoP).
        fields.set("credential_type", tokenType?.lowercased() == "pop" ? "AccessToken_With_AuthScheme" : "AccessToken")
        fields.set("secret", secret)
        fields.set("home_account_id", nullIfEmpty: homeAccountId)  // an app token's: null, as MSAL for Python
        fields.set("environment", environment)
        fields.set("client_id", clientId)
        fields.set("target", target)
        fields.set("realm", realm)
        fields.set("token_type", tokenType)
        fields.setTime("cached_at", cachedAt)
        fields.setTime("expires_on", expiresOn)
        fields.setTime("extended_expires_on", extendedExpiresOn)
        fields.setTime("refresh_on", refreshOn)
        fields.set("key_id", keyId)
        fields.append(additionalFields)
        return fields.object
    }

    var cacheKey: String {
        CacheKeys.accessToken(
            homeAccountId: homeAccountId, environment: environment, clientId: clientId,
            realm: realm, target: target, tokenType: tokenType, keyId: keyId)
    }

}
