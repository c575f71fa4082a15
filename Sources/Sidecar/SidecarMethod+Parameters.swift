extension SidecarMethod {
    /// The params members the method reads, declared once: the JSON edge allows exactly these
    /// (each handler's `Params(allowed:)`), the forward socket's table allows those of them a
    /// forwarded session may set (``ForwardPolicy/rule(_:)``, which names only what it takes
    /// away), and the forward tests walk every one. `diagnostics/echo` answers whatever it is
    /// sent (its members are not parameters).
    public var parameters: Set<String> {
        switch self {
        case .initialize: InitializeRequest.parameters
        case .ping, .getDeviceInformation, .diagnosticsEcho: []
        case .getCurrentAccount: GetCurrentAccountRequest.parameters
        case .getCacheSummary: GetCacheSummaryRequest.parameters
        case .getAccounts: GetAccountsRequest.parameters
        case .setCurrentAccount: SetCurrentAccountRequest.parameters
        case .signout: SignoutRequest.parameters
        case .acquireToken: AcquireTokenRequest.parameters
        case .acquireTokenSilent: AcquireTokenSilentRequest.parameters
        case .callGraph: CallGraphRequest.parameters
        case .signHttpRequest: SignHttpRequestRequest.parameters
        case .diagnosticsSleep: ["ms"]
        }
    }
}
