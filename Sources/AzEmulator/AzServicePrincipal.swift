import JSON

extension AzResults {
    /// `account show` for an app signed in with a federated credential, as Azure CLI prints it
    /// after `az login --service-principal --federated-token ... --allow-no-subscriptions`: the
    /// tenant-level account whose user is the service principal (its name: the client id).
    public static func servicePrincipalAccount(clientId: String, tenantId: String, cloud: AzCloud) -> JSONValue {
        guard case .object(var object) = account(username: clientId, tenantId: tenantId, cloud: cloud) else { return .null }
        object["user"] = ["name": .string(clientId), "type": "servicePrincipal"]
        return .object(object)
    }
}
