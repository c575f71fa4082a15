import AuthCore

/// With no configuration file, a CI job or pod configures an app's sign-in with the variables
/// azure-identity's `WorkloadIdentityCredential` and `EnvironmentCredential` read:
/// `AZURE_CLIENT_ID`, `AZURE_TENANT_ID`, `AZURE_AUTHORITY_HOST` (the authority host, default
/// `https://login.microsoftonline.com/`), and the assertion's source:
/// `AZURE_FEDERATED_TOKEN_FILE` (Kubernetes workload identity), else GitHub Actions'
/// `ACTIONS_ID_TOKEN_REQUEST_URL` and `ACTIONS_ID_TOKEN_REQUEST_TOKEN`.
public enum FederationEnvironment {
    /// The default scopes of an app configured here: Azure Resource Manager's, as Azure CLI's.
    public static let defaultScopes = ["https://management.azure.com/.default"]
    public static let defaultAuthorityHost = "https://login.microsoftonline.com"

    /// The keys these variables set (`nil`: not all of them are there).
    public static func overrides(_ variable: (String) -> String?) -> ConfigurationOverrides? {
        func value(_ name: String) -> String? { variable(name).flatMap { $0.isEmpty ? nil : $0 } }
        guard let clientId = value("AZURE_CLIENT_ID"), let tenant = value("AZURE_TENANT_ID") else { return nil }
        let setting: ClientAssertionSetting
        if let file = value("AZURE_FEDERATED_TOKEN_FILE") {
            setting = .file(file)
        } else if value("ACTIONS_ID_TOKEN_REQUEST_URL") != nil, value("ACTIONS_ID_TOKEN_REQUEST_TOKEN") != nil {
            setting = .githubActions(audience: GitHubActionsAssertionSource.defaultAudience)
        } else {
            return nil
        }
        var host = value("AZURE_AUTHORITY_HOST") ?? defaultAuthorityHost
        if !host.contains("://") { host = "https://" + host }  // azure-identity accepts a bare host too
        while host.hasSuffix("/") { host.removeLast() }
        var overrides = ConfigurationOverrides()
        overrides.clientId = clientId
        overrides.authority = host + "/" + tenant
        overrides.scopes = defaultScopes
        overrides.clientAssertion = setting
        return overrides
    }
}
