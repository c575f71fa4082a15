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
        let (uri, token) = try AssertionEndpoint.variables(
            "SYSTEM_OIDCREQUESTURI", "SYSTEM_ACCESSTOKEN", of: self, variable: variable,
            hint: "map System.AccessToken into the step's env")
        let request = HTTPRequest(
            method: "POST",
            url: AssertionEndpoint.url(uri, adding: [("api-version", "7.1"), ("serviceConnectionId", serviceConnectionId)]),
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"), ("Accept", "application/json")],
            body: Array("{}".utf8))
        return try await AssertionEndpoint.assertion(request, member: "oidcToken", from: self, transport: transport)
    }
}
