import JSONRPC

extension SidecarMethod {
    /// The params members the method reads, declared once: the JSON edge allows exactly these
    /// (each handler's `Params(allowed:)`), the forward socket's table allows those of them a
    /// forwarded session may set (``ForwardPolicy/rule(_:)``, which names only what it takes
    /// away), and the forward tests walk every one. `diagnostics/echo` answers whatever it is
    /// sent (its members are not parameters).
    public var parameters: Set<String> { requestType?.parameters ?? [] }

    /// The method's request type, the one registry of the typed requests (``RequestType``):
    /// its parameter names, how its params are decoded at the edge and its result's type.
    /// `nil` for `diagnostics/echo`, which answers whatever it is sent.
    public var requestType: (any RequestType.Type)? {
        switch self {
        case .initialize: InitializeRequest.self
        case .ping: PingRequest.self
        case .getDeviceInformation: GetDeviceInformationRequest.self
        case .getCurrentAccount: GetCurrentAccountRequest.self
        case .getCacheSummary: GetCacheSummaryRequest.self
        case .getAccounts: GetAccountsRequest.self
        case .setCurrentAccount: SetCurrentAccountRequest.self
        case .signout: SignoutRequest.self
        case .acquireToken: AcquireTokenRequest.self
        case .acquireTokenSilent: AcquireTokenSilentRequest.self
        case .callGraph: CallGraphRequest.self
        case .signHttpRequest: SignHttpRequestRequest.self
        case .diagnosticsSleep: DiagnosticsSleepRequest.self
        case .diagnosticsEcho: nil
        }
    }
}
