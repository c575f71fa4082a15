extension SidecarMethod {
    /// The params members the method reads, declared once: the JSON edge allows exactly these
    /// (each handler's `Params(allowed:)`), the forward socket's table allows those of them a
    /// forwarded session may set (``ForwardPolicy/rule(_:)``, which names only what it takes
    /// away), and the forward tests walk every one. `diagnostics/echo` answers whatever it is
    /// sent (its members are not parameters).
    public var parameters: Set<String> {
        switch self {
        case .initialize: ConfigurationOverrides.keys.union(SidecarService.initializeExtraKeys)
        case .ping, .getDeviceInformation, .getCurrentAccount, .getCacheSummary, .diagnosticsEcho: []
        case .getAccounts: ["username"]
        case .setCurrentAccount: ["account"]
        case .signout: ["account", "signoutFromBrowser"]
        case .acquireToken: Self.acquireTokenParameters
        case .acquireTokenSilent: Self.acquireTokenSilentParameters
        case .callGraph: Self.callGraphParameters
        case .signHttpRequest: PopParams.signMembers
        case .diagnosticsSleep: ["ms"]
        }
    }

    // Made once: every request's params are checked against them.
    private static let acquireTokenParameters: Set<String> = [
        "scopes", "promptType", "loginHint", "domainHint", "account", "authority", "claims", "extraScopesToConsent",
        "extraQueryParameters", "flow", "correlationId", "sshCertificate", "proofOfPossession",
    ]
    private static let acquireTokenSilentParameters: Set<String> = [
        "scopes", "account", "authority", "forceRefresh", "claims", "correlationId", "sshCertificate", "proofOfPossession",
    ]
    private static let callGraphParameters: Set<String> = [
        "path", "method", "apiVersion", "query", "headers", "body", "account", "scopes", "allPages", "maxPages", "timeoutSeconds",
        "correlationId",
    ]
}
