import JSON

/// The subscriptions Azure CLI keeps for an account, in its `azureProfile.json` shape
/// (azure-cli's `_profile.py`: `_normalize_properties`, `SubscriptionFinder`), made from
/// Resource Manager's `GET /tenants` and `GET /subscriptions` (api-version 2022-12-01), and
/// the rules of `az account show/list/set` over them. Pure: the shim fetches and stores.
public enum AzSubscriptions {
    /// The api-version Azure CLI 2.91 lists tenants and subscriptions with.
    public static let apiVersion = "2022-12-01"

    /// A tenant from `GET /tenants`: its ID and the names az copies into its subscriptions.
    public struct Tenant: Equatable, Sendable {
        public let id: String
        public let displayName: String?
        public let defaultDomain: String?
    }

    /// The tenants of a `GET /tenants` page (`value`).
    public static func tenants(_ page: JSONValue) -> [Tenant] {
        (page["value"]?.arrayValue ?? []).compactMap { item in
            guard let id = item["tenantId"]?.stringValue, !id.isEmpty else { return nil }
            return Tenant(id: id, displayName: item["displayName"]?.stringValue, defaultDomain: item["defaultDomain"]?.stringValue)
        }
    }

    /// The profile entries of a `GET /subscriptions` page listed with a token for `tenant`:
    /// `tenantId` is the tenant listed under, `homeTenantId` the subscription's own (az maps
    /// the REST `tenantId` to it), `isDefault` false until ``withDefault(_:previous:)``.
    public static func entries(_ page: JSONValue, tenant: Tenant, username: String, cloud: AzCloud) -> [JSONValue] {
        (page["value"]?.arrayValue ?? []).compactMap { item in
            guard let id = item["subscriptionId"]?.stringValue ?? item["id"]?.stringValue?.split(separator: "/").last.map(String.init)
            else { return nil }
            var entry: JSONObject = [
                "id": .string(id), "name": item["displayName"] ?? .string(id), "state": item["state"] ?? "Enabled",
                "user": ["name": .string(username), "type": "user"], "isDefault": false, "tenantId": .string(tenant.id),
                "environmentName": .string(cloud.name), "homeTenantId": item["tenantId"] ?? .string(tenant.id),
                "managedByTenants": .array(
                    (item["managedByTenants"]?.arrayValue ?? []).map { ["tenantId": $0["tenantId"] ?? .null] }),
            ]
            // az copies them from the tenant's description, null when it has none
            entry["tenantDefaultDomain"] = tenant.defaultDomain.map(JSONValue.string) ?? .null
            entry["tenantDisplayName"] = tenant.displayName.map(JSONValue.string) ?? .null
            return .object(entry)
        }
    }

    /// `entries` with one default: the subscription `previous` names when still there, else
    /// the first enabled one, else the first (az's `_set_subscriptions`).
    public static func withDefault(_ entries: [JSONValue], previous: String?) -> [JSONValue] {
        let chosen =
            previous.flatMap { id in entries.firstIndex { $0["id"]?.stringValue == id } }
            ?? entries.firstIndex { $0["state"]?.stringValue == "Enabled" } ?? entries.indices.first
        return entries.enumerated().map { index, entry in
            guard case .object(var object) = entry else { return entry }
            object["isDefault"] = .bool(index == chosen)
            return .object(object)
        }
    }

    /// The default entry (`isDefault`), else the first.
    public static func defaultEntry(_ entries: [JSONValue]) -> JSONValue? {
        entries.first { $0["isDefault"]?.boolValue == true } ?? entries.first
    }

    /// The entry `idOrName` names: its ID or name, case-insensitively, as az compares them.
    public static func find(_ idOrName: String, in entries: [JSONValue]) -> JSONValue? {
        let asked = idOrName.lowercased()
        return entries.first { $0["id"]?.stringValue?.lowercased() == asked }
            ?? entries.first { $0["name"]?.stringValue?.lowercased() == asked }
    }

    /// `az account list`: `environmentName` renamed `cloudName`, and only the enabled ones
    /// without `--all` (az's `list_subscriptions`).
    public static func listed(_ entries: [JSONValue], all: Bool) -> [JSONValue] {
        entries.compactMap { entry in
            guard case .object(var object) = entry else { return nil }
            if !all, object["state"]?.stringValue != "Enabled" { return nil }
            object["cloudName"] = object["environmentName"] ?? .null
            object["environmentName"] = nil
            return .object(object)
        }
    }

    /// `az account list -o table`'s rows (azure-cli's `transform_account_list`).
    public static func tableRows(_ listed: JSONValue) -> [AzTable.Row] {
        (listed.arrayValue ?? []).map { entry in
            [
                ("Name", entry["name"] ?? .null), ("CloudName", entry["cloudName"] ?? .null), ("SubscriptionId", entry["id"] ?? .null),
                ("TenantId", entry["tenantId"] ?? .null), ("State", entry["state"] ?? .null), ("IsDefault", entry["isDefault"] ?? .null),
            ]
        }
    }

    /// az's message for `az account set` naming no subscription of the account (az lower-cases
    /// what was asked before it says so).
    public static func setNotFound(_ subscription: String, cloud: AzCloud) -> String {
        "The subscription of '\(subscription.lowercased())' doesn't exist in cloud '\(cloud.name)'."
    }
}
