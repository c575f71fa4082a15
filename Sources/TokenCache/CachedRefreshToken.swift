import JSON

/// A refresh token entity (section `RefreshToken`), as MSAL for Python writes it.
///
/// Refresh tokens are tenant-independent (no realm). A *family* refresh token
/// (`familyId` `"1"`, FOCI) may be redeemed by any client of the Microsoft family.
public struct CachedRefreshToken: Sendable, Hashable {
    public var homeAccountId: String
    public var environment: String
    public var clientId: String
    public var secret: String
    /// `"1"` for a family refresh token (`""` or `nil`: not a family token).
    public var familyId: String?
    /// The scopes of the response that brought it (optional in the schema).
    public var target: String?
    /// When it was written (Unix seconds); MSAL tries newer refresh tokens first.
    public var lastModificationTime: Int64?
    public var additionalFields: JSONObject

    public init(
        homeAccountId: String, environment: String, clientId: String, secret: String,
        familyId: String? = nil, target: String? = nil, lastModificationTime: Int64? = nil,
        additionalFields: JSONObject = JSONObject()
    ) {
        self.homeAccountId = homeAccountId
        self.environment = environment
        self.clientId = clientId
        self.secret = secret
        self.familyId = familyId
        self.target = target
        self.lastModificationTime = lastModificationTime
        self.additionalFields = additionalFields
    }
}

extension CachedRefreshToken: CacheEntity {
    static let section = CacheKeys.Section.refreshToken
    private static let known: Set<String> = [
        "credential_type", "secret", "home_account_id", "environment", "client_id", "target",
        "last_modification_time", "family_id",
    ]

    init?(json: JSONObject) {
        let fields = CacheFields(json)
        guard let secret = fields.string("secret"), let environment = fields.string("environment"),
            let clientId = fields.string("client_id"), let home = fields.string("home_account_id")
        else { return nil }
        self.init(
            homeAccountId: home, environment: environment, clientId: clientId, secret: secret,
            familyId: fields.string("family_id"), target: fields.string("target"),
            lastModificationTime: fields.time("last_modification_time"),
            additionalFields: fields.remaining(excluding: Self.known))
    }

    var json: JSONObject {
        var fields = CacheFields()
        fields.set("credential_type", "RefreshToken")
        fields.set("secret", secret)
        fields.set("home_account_id", homeAccountId)
        fields.set("environment", environment)
        fields.set("client_id", clientId)
        fields.set("target", target)
        fields.setTime("last_modification_time", lastModificationTime)
        fields.set("family_id", familyId)
        fields.append(additionalFields)
        return fields.object
    }

    var cacheKey: String {
        CacheKeys.refreshToken(
            homeAccountId: homeAccountId, environment: environment, clientId: clientId, target: target)
    }

}
