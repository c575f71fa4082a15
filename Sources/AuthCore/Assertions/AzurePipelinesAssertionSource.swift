import AuthSeams

/// Azure Pipelines' OIDC token for a service connection: `POST
/// $SYSTEM_OIDCREQUESTURI?api-version=7.1&serviceConnectionId=ID` with `Authorization:
/// Bearer $SYSTEM_ACCESSTOKEN`, answering `{"oidcToken": JWT}`. Asked at each exchange.
public struct AzurePipelinesAssertionSource: ClientAssertionSource {
    public let serviceConnectionId: String
    let variable: @Sendable (String) -> String?

    public init(serviceConnectionId: String, variable: @escaping @Sendable (String) -> String?) {
        self.serviceConnectionId = serviceConnectionId
        self.variable = variable
    }

    public var name: String { "Azure Pipelines (service connection \(serviceConnectionId))" }

    public func assertion(transport: any HTTPTransport) async throws -> ClientAssertion {
        guard let uri = variable("SYSTEM_OIDCREQUESTURI"), !uri.isEmpty,
            let token = variable("SYSTEM_ACCESSTOKEN"), !token.isEmpty
        else {
            throw failure("SYSTEM_OIDCREQUESTURI and SYSTEM_ACCESSTOKEN are not set (map System.AccessToken into the step's env)")
        }
        let separator = uri.contains("?") ? "&" : "?"
        let query = FormEncoding.query([("api-version", "7.1"), ("serviceConnectionId", serviceConnectionId)])
        let request = HTTPRequest(
            method: "POST", url: uri + separator + query,
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"), ("Accept", "application/json")],
            body: Array("{}".utf8))
        let json = try await AssertionEndpoint.json(request, from: self, transport: transport)
        guard let value = json["oidcToken"]?.stringValue else { throw failure(.malformedResponse, "the answer has no \"oidcToken\"") }
        return try assertion(fromText: value)
    }
}
