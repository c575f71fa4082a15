import JSON

/// A signed-in account, in the shape MSAL for Node calls `AccountInfo`.
public struct Account: Sendable, Equatable {
    /// `{uid}.{utid}` from client_info (for B2C, uid is `{oid}-{policy}`).
    public var homeAccountId: String
    /// The object id in the tenant (`oid`, else `sub`).
    public var localAccountId: String
    /// The authority host (`login.microsoftonline.com`).
    public var environment: String
    public var tenantId: String
    public var username: String
    public var name: String?
    /// The ID token's claims, when one is at hand.
    public var idTokenClaims: IDTokenClaims?

    public init(
        homeAccountId: String, localAccountId: String, environment: String, tenantId: String,
        username: String, name: String? = nil, idTokenClaims: IDTokenClaims? = nil
    ) {
        self.homeAccountId = homeAccountId
        self.localAccountId = localAccountId
        self.environment = environment
        self.tenantId = tenantId
        self.username = username
        self.name = name
        self.idTokenClaims = idTokenClaims
    }
}

extension Account {
    /// The account's identifying fields as JSON (no claims), e.g. to remember it after sign-out.
    public var snapshot: JSONObject {
        var object: JSONObject = [
            "homeAccountId": .string(homeAccountId), "localAccountId": .string(localAccountId),
            "environment": .string(environment), "tenantId": .string(tenantId), "username": .string(username),
        ]
        if let name { object["name"] = .string(name) }
        return object
    }

    public init?(snapshot: JSONObject) {
        guard let home = snapshot["homeAccountId"]?.stringValue, let local = snapshot["localAccountId"]?.stringValue,
            let environment = snapshot["environment"]?.stringValue, let tenant = snapshot["tenantId"]?.stringValue,
            let username = snapshot["username"]?.stringValue
        else { return nil }
        self.init(
            homeAccountId: home, localAccountId: local, environment: environment, tenantId: tenant,
            username: username, name: snapshot["name"]?.stringValue)
    }
}

/// How a request names an account.
public enum AccountReference: Sendable, Equatable {
    case homeAccountId(String)
    case username(String)
}
