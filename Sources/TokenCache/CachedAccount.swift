import JSON

/// An account entity (section `Account`), as MSAL for Python writes it.
///
/// One per home account, environment and realm (tenant): a guest in two tenants has two.
/// `authorityType` is `"MSSTS"` for Microsoft Entra ID, personal accounts *and* Azure AD B2C
/// (B2C is the v2 endpoint too, and MSAL for Python lists only MSSTS/ADFS accounts), `"ADFS"`
/// when the realm is `adfs`.
public struct CachedAccount: Sendable, Hashable {
    /// `{uid}.{utid}` from `client_info` (for B2C the uid ends with the policy name).
    public var homeAccountId: String
    /// The authority host, e.g. `login.microsoftonline.com`.
    public var environment: String
    /// The tenant ID.
    public var realm: String
    /// The object ID in that tenant (`oid`, else `sub`).
    public var localAccountId: String
    /// `preferred_username` (or `upn`); `""` when unknown, as the schema wants no null.
    public var username: String
    /// The display name (`name` claim); MSAL for Python does not write it, MSAL.NET/JS do.
    public var name: String?
    public var authorityType: String
    /// The raw base64url `client_info` the service returned, when kept.
    public var clientInfo: String?
    /// The grant that established the account (`authorization_code`, `device_code`, ...).
    public var accountSource: String?
    /// Members this type does not model, kept for round trips.
    public var additionalFields: JSONObject

    public init(
        homeAccountId: String, environment: String, realm: String, localAccountId: String,
        username: String, name: String? = nil, authorityType: String = "MSSTS",
        clientInfo: String? = nil, accountSource: String? = nil,
        additionalFields: JSONObject = JSONObject()
    ) {
        self.homeAccountId = homeAccountId
        self.environment = environment
        self.realm = realm
        self.localAccountId = localAccountId
        self.username = username
        self.name = name
        self.authorityType = authorityType
        self.clientInfo = clientInfo
        self.accountSource = accountSource
        self.additionalFields = additionalFields
    }
}

extension CachedAccount: CacheEntity {
    static let section = CacheKeys.Section.account
    static let lookupField: String? = "username"
    private static let known: Set<String> = [
        "home_account_id", "environment", "realm", "local_account_id", "username", "name",
        "authority_type", "client_info", "account_source",
    ]

    init?(json: JSONObject) {
        let fields = CacheFields(json)
        guard let home = fields.string("home_account_id"), let environment = fields.string("environment")
        else { return nil }
        self.init(
            homeAccountId: home, environment: environment, realm: fields.string("realm") ?? "",
            localAccountId: fields.string("local_account_id") ?? "",
            username: fields.string("username") ?? "", name: fields.string("name"),
            authorityType: fields.string("authority_type") ?? "MSSTS",
            clientInfo: fields.string("client_info"), accountSource: fields.string("account_source"),
            additionalFields: fields.remaining(excluding: Self.known))
    }

    var json: JSONObject {
        var fields = CacheFields()
        fields.set("home_account_id", homeAccountId)
        fields.set("environment", environment)
        fields.set("realm", realm)
        fields.set("local_account_id", localAccountId)
        fields.set("username", username)
        fields.set("name", name)
        fields.set("authority_type", authorityType)
        fields.set("client_info", clientInfo)
        fields.set("account_source", accountSource)
        fields.append(additionalFields)
        return fields.object
    }

    var cacheKey: String {
        CacheKeys.account(homeAccountId: homeAccountId, environment: environment, realm: realm)
    }

}
