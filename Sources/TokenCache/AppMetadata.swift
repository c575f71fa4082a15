import JSON

/// Facts about a client application (section `AppMetadata`): whether it is in the family.
public struct AppMetadata: Sendable, Hashable {
    public var clientId: String
    public var environment: String
    /// `"1"` when the service said the client is a family (FOCI) client (`""`/`nil`: not).
    public var familyId: String?
    public var additionalFields: JSONObject

    public init(
        clientId: String, environment: String, familyId: String? = nil,
        additionalFields: JSONObject = JSONObject()
    ) {
        self.clientId = clientId
        self.environment = environment
        self.familyId = familyId
        self.additionalFields = additionalFields
    }
}

extension AppMetadata: CacheEntity {
    static let section = CacheKeys.Section.appMetadata
    private static let known: Set<String> = ["client_id", "environment", "family_id"]

    init?(json: JSONObject) {
        let fields = CacheFields(json)
        guard let clientId = fields.string("client_id"), let environment = fields.string("environment")
        else { return nil }
        self.init(
            clientId: clientId, environment: environment,
            familyId: fields.string("family_id"),
            additionalFields: fields.remaining(excluding: Self.known))
    }

    var json: JSONObject {
        var fields = CacheFields()
        fields.set("client_id", clientId)
        fields.set("environment", environment)
        fields.set("family_id", familyId)
        fields.append(additionalFields)
        return fields.object
    }

    var cacheKey: String { CacheKeys.appMetadata(environment: environment, clientId: clientId) }
}
