import JSON

/// An ID token entity (section `IdToken`), as MSAL for Python writes it.
public struct CachedIdToken: Sendable, Hashable {
    public var homeAccountId: String
    public var environment: String
    public var realm: String
    public var clientId: String
    /// The raw JWT.
    public var secret: String
    public var additionalFields: JSONObject

    public init(
        homeAccountId: String, environment: String, realm: String, clientId: String,
        secret: String, additionalFields: JSONObject = JSONObject()
    ) {
        self.homeAccountId = homeAccountId
        self.environment = environment
        self.realm = realm
        self.clientId = clientId
        self.secret = secret
        self.additionalFields = additionalFields
    }
}

extension CachedIdToken: CacheEntity {
    static let section = CacheKeys.Section.idToken
    private static let known: Set<String> = [
        "credential_type", "secret", "home_account_id", "environment", "realm", "client_id",
    ]

    init?(json: JSONObject) {
        let fields = CacheFields(json)
        guard let secret = fields.string("secret"), let environment = fields.string("environment"),
            let clientId = fields.string("client_id"), let home = fields.string("home_account_id")
        else { return nil }
        self.init(
            homeAccountId: home, environment: environment, realm: fields.string("realm") ?? "",
            clientId: clientId, secret: secret,
            additionalFields: fields.remaining(excluding: Self.known))
    }

    var json: JSONObject {
        var fields = CacheFields()
        fields.set("credential_type", "IdToken")
        fields.set("secret", secret)
        fields.set("home_account_id", homeAccountId)
        fields.set("environment", environment)
        fields.set("realm", realm)
        fields.set("client_id", clientId)
        fields.append(additionalFields)
        return fields.object
    }

    var cacheKey: String {
        CacheKeys.idToken(homeAccountId: homeAccountId, environment: environment, clientId: clientId, realm: realm)
    }

}
