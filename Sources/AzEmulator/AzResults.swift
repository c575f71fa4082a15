import Adapters
import JSON

/// The results az's two answered commands return, before `--output`/`--query`: the shapes of
/// azure-cli's `get_access_token` (profile/custom.py) and of a tenant-level account in its
/// profile (`_profile.py`, `az login --allow-no-subscriptions`): the signed-in user without a
/// subscription, whose ID is the tenant's.
public enum AzResults {
    /// az's name for a tenant-level account (`_TENANT_LEVEL_ACCOUNT_NAME`).
    public static let tenantLevelAccountName = "N/A(tenant level account)"
    /// What az says when no one is signed in (`_AZ_LOGIN_MESSAGE`); azure-identity turns a
    /// failure saying "az login" into `CredentialUnavailableError`.
    public static let notLoggedIn = "Please run 'az login' to setup account."

    /// `account get-access-token`: `tenant` is the `--tenant` asked for, else the account's;
    /// `subscription` (the account's ID: here its tenant) only without `--tenant`, as az.
    public static func accessToken(
        token: String, expiresOn: Int64, tokenType: String, requestedTenant: String?, accountTenant: String
    ) -> JSONValue {
        var object: JSONObject = [
            "tokenType": .string(tokenType), "accessToken": .string(token), "expires_on": .int(expiresOn),
            "expiresOn": .string(AzAccessToken.localTime(expiresOn)), "tenant": .string(requestedTenant ?? accountTenant),
        ]
        if requestedTenant == nil { object["subscription"] = .string(accountTenant) }
        return .object(object)
    }

    /// `account show`: the signed-in user as az's tenant-level account.
    public static func account(username: String, tenantId: String, cloud: AzCloud) -> JSONValue {
        [
            "id": .string(tenantId), "name": .string(tenantLevelAccountName), "state": "Enabled",
            "user": ["name": .string(username), "type": "user"], "isDefault": true, "tenantId": .string(tenantId),
            "environmentName": .string(cloud.name),
        ]
    }

    /// Whether `--subscription` names this account (its ID or name, case-insensitively, as az
    /// compares them).
    public static func names(_ subscription: String, tenantId: String) -> Bool {
        let asked = subscription.lowercased()
        return asked == tenantId.lowercased() || asked == tenantLevelAccountName.lowercased()
    }

    /// az's message for a `--subscription` that names no account.
    public static func subscriptionNotFound(_ subscription: String) -> String {
        "Subscription '\(subscription)' not found. Check the spelling and casing and try again."
    }

    /// The scope az asks for: `--scope` as given (it wins over `--resource`, as in az), else the resource (`--resource`, else
    /// `--resource-type`'s, else Resource Manager) + `/.default`, its trailing slash kept
    /// (azure-cli's `resource_to_scopes`: `https://management.core.windows.net//.default`).
    public static func scopes(_ request: AzCommandLine.GetAccessToken, cloud: AzCloud) -> [String] {
        // `--scope ""` names no scope: az's default resource, as with no `--scope` (a list of
        // OpenID Connect scopes alone is the engine's default scopes: `Scopes.requested`).
        if request.scopes.contains(where: { !$0.isEmpty }) { return request.scopes }
        let resource = request.resource ?? request.resourceType.flatMap(cloud.resource) ?? cloud.armResource
        return [resource + "/.default"]
    }
}
