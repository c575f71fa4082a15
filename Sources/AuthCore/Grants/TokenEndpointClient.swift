import AuthSeams
import JSON

/// Posts a grant to a token endpoint and interprets the answer.
struct TokenEndpointClient: Sendable {
    let transport: any HTTPTransport
    let clientId: String
    /// Waits before the one retry of a 5xx answer.
    var clock: any AuthClock = SystemClock()

    /// The headers MSAL sends with every call (correlation, SDK identification).
    static func headers(correlationId: String) -> [(name: String, value: String)] {
        [
            ("client-request-id", correlationId), ("return-client-request-id", "true"),
            ("x-client-SKU", LibraryInfo.name), ("x-client-Ver", LibraryInfo.version), ("x-client-OS", "linux"),
            ("Accept", "application/json"),
        ]
    }

    /// Redeems `fields` (plus `client_id` and `client_info=1`) at `endpoint`.
    /// - Throws: ``AuthError`` for OAuth errors (with the service's details), transport
    ///   failures and malformed answers; `CancellationError` when cancelled.
    func redeem(_ fields: [(String, String)], at endpoint: String, correlationId: String) async throws -> TokenResponse {
        let json = try await post(fields, to: endpoint, correlationId: correlationId)
        return try TokenResponse(json: json)
    }

    /// Posts a form and returns the JSON of a 200 answer; an error answer becomes ``AuthError``.
    func post(_ fields: [(String, String)], to endpoint: String, correlationId: String) async throws -> JSONValue {
        let request = HTTPRequest.form(
            url: endpoint, fields: [("client_id", clientId)] + fields + [("client_info", "1")],
            headers: Self.headers(correlationId: correlationId))
        var response = try await ServiceCall.send(request, over: transport)
        if [500, 502, 503, 504].contains(response.status) {  // one retry, as MSAL does
            try await clock.sleep(for: .seconds(min(Self.retryAfter(response) ?? 1, 5)))
            response = try await ServiceCall.send(request, over: transport)
        }
        let json = try? JSONValue.parse(response.body)
        if response.status == 200 {
            guard let json, json.objectValue != nil else { throw AuthError.malformed("the token endpoint's answer is not a JSON object") }
            return json
        }
        let endpoint = OAuthEndpoint.token(grantType: fields.first { $0.0 == "grant_type" }?.1)
        if let json, json["error"]?.stringValue != nil {
            var error = OAuthErrorResponse.authError(
                json: json, httpStatus: response.status,
                retryAfter: Self.retryAfter(response), endpoint: endpoint)
            error.correlationId = error.correlationId ?? correlationId
            throw error
        }
        throw Self.bareError(
            status: response.status, retryAfter: Self.retryAfter(response), endpoint: endpoint,
            correlationId: correlationId)
    }

    /// The error for an answer without an OAuth error body (its kind from the classifier: an
    /// empty 400 answering a refresh token means the user must sign in again).
    private static func bareError(status: Int, retryAfter: Int?, endpoint: OAuthEndpoint, correlationId: String) -> AuthError {
        let kind = OAuthErrorClassifier.kind(of: OAuthErrorAnswer(error: nil, httpStatus: status), at: endpoint)
        var error =
            kind == .interactionRequired
            ? AuthError(
                kind,
                "the token endpoint refused the refresh token (HTTP \(status) without an OAuth error); "
                    + "sign in again with acquireToken")
            : AuthError(kind, "the token endpoint answered HTTP \(status)")
        error.httpStatus = status
        error.retryAfter = kind == .interactionRequired ? nil : retryAfter
        error.correlationId = correlationId
        return error
    }

    static func retryAfter(_ response: HTTPResponse) -> Int? {
        response.header("Retry-After").flatMap { Int($0.filter { $0 != " " }) }
    }
}
