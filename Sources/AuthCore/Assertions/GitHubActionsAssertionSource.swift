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
        let (url, token) = try AssertionEndpoint.variables(
            "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", of: self, variable: variable,
            hint: "does the job have `permissions: id-token: write`?")
        let request = HTTPRequest(
            method: "GET", url: AssertionEndpoint.url(url, adding: [("audience", audience)]),
            headers: [("Authorization", "bearer \(token)"), ("Accept", "application/json")])
        return try await AssertionEndpoint.assertion(request, member: "value", from: self, transport: transport)
    }
}

/// A CI system's token endpoint (GitHub Actions, Azure Pipelines): its URL and bearer token
/// from two environment variables, and the assertion in one member of its JSON answer.
enum AssertionEndpoint {
    /// The values of the variables `url` and `token`, or the source's error naming them.
    static func variables(
        _ url: String, _ token: String, of source: some ClientAssertionSource, variable: (String) -> String?, hint: String
    ) throws -> (url: String, token: String) {
        guard let urlValue = variable(url), !urlValue.isEmpty, let tokenValue = variable(token), !tokenValue.isEmpty else {
            throw source.failure("\(url) and \(token) are not set (\(hint))")
        }
        return (urlValue, tokenValue)
    }

    /// `url` with `fields` added to its query.
    static func url(_ url: String, adding fields: [(String, String)]) -> String {
        url + (url.contains("?") ? "&" : "?") + FormEncoding.query(fields)
    }

    /// The assertion in the string member `member` of the endpoint's JSON answer. A transient
    /// failure (HTTP 429 or 5xx, a network error; not a time-out) is tried again as a token
    /// endpoint call is (``TransientRetry/Budget/oneShot``: 3 tries in all).
    static func assertion(
        _ request: HTTPRequest, member: String, from source: some ClientAssertionSource, transport: any HTTPTransport
    ) async throws -> ClientAssertion {
        var retry = TransientRetry(.oneShot)
        while true {
            do {
                return try await assertionOnce(request, member: member, from: source, transport: transport)
            } catch let error as AuthError {
                guard let delay = retry.delay(after: error, interval: 1) else { throw error }
                try await Task.sleep(for: .seconds(delay))
            }
        }
    }

    private static func assertionOnce(
        _ request: HTTPRequest, member: String, from source: some ClientAssertionSource, transport: any HTTPTransport
    ) async throws -> ClientAssertion {
        let response = try await ServiceCall.send(request, over: transport, service: source.name)
        guard response.status == 200 else {
            var error = source.failure(.serverError, "its endpoint answered HTTP \(response.status)")
            error.httpStatus = response.status
            error.retryAfter = TokenEndpointClient.retryAfter(response)
            throw error
        }
        guard let json = try? JSONValue.parse(response.body), json.objectValue != nil else {
            throw source.failure(.malformedResponse, "its endpoint's answer is not a JSON object")
        }
        guard let value = json[member]?.stringValue else { throw source.failure(.malformedResponse, "the answer has no \"\(member)\"") }
        return try source.assertion(fromText: value)
    }
}
