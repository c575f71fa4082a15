import AuthSeams
import JSON

/// GitHub Actions' OIDC token (a job with `permissions: id-token: write`): `GET
/// $ACTIONS_ID_TOKEN_REQUEST_URL&audience=AUDIENCE` with `Authorization: bearer
/// $ACTIONS_ID_TOKEN_REQUEST_TOKEN`, answering `{"value": JWT}`. Asked at each exchange.
public struct GitHubActionsAssertionSource: ClientAssertionSource {
    public static let defaultAudience = "api://AzureADTokenExchange"
    public let audience: String
    /// Reads an environment variable at each exchange (the runner's values).
    let variable: @Sendable (String) -> String?

    public init(audience: String = Self.defaultAudience, variable: @escaping @Sendable (String) -> String?) {
        self.audience = audience
        self.variable = variable
    }

    public var name: String { "GitHub Actions" }

    public func assertion(transport: any HTTPTransport) async throws -> ClientAssertion {
        guard let url = variable("ACTIONS_ID_TOKEN_REQUEST_URL"), !url.isEmpty,
            let token = variable("ACTIONS_ID_TOKEN_REQUEST_TOKEN"), !token.isEmpty
        else {
            throw failure(
                "ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN are not set (does the job have `permissions: id-token: write`?)")
        }
        let separator = url.contains("?") ? "&" : "?"
        let request = HTTPRequest(
            method: "GET", url: url + separator + FormEncoding.query([("audience", audience)]),
            headers: [("Authorization", "bearer \(token)"), ("Accept", "application/json")])
        let json = try await AssertionEndpoint.json(request, from: self, transport: transport)
        guard let value = json["value"]?.stringValue else { throw failure(.malformedResponse, "the answer has no \"value\"") }
        return try assertion(fromText: value)
    }
}

/// Asks a CI system's token endpoint (GitHub Actions, Azure Pipelines) for JSON.
enum AssertionEndpoint {
    static func json(_ request: HTTPRequest, from source: some ClientAssertionSource, transport: any HTTPTransport) async throws -> JSONValue {
        let response = try await ServiceCall.send(request, over: transport, service: source.name)
        guard response.status == 200 else { throw source.failure(.serverError, "its endpoint answered HTTP \(response.status)") }
        guard let json = try? JSONValue.parse(response.body), json.objectValue != nil else {
            throw source.failure(.malformedResponse, "its endpoint's answer is not a JSON object")
        }
        return json
    }
}
