import AuthSeams
import JSON
import Logging

/// Posts a grant to a token endpoint and interprets the answer; transient failures are
/// tried again per ``TransientRetry`` (the one rule, protocol/README.md "Transient failures").
struct TokenEndpointClient: Sendable {
    let transport: any HTTPTransport
    let clientId: String
    /// Waits between tries.
    var clock: any AuthClock = SystemClock()
    /// Where a retry is reported (a warning: the failure, the wait, the attempt).
    var logger = Logger(label: "auth-sidecar.token-endpoint")

    /// The headers MSAL sends with every call (correlation, SDK identification, and that
    /// `Retry-After` and HTTP 429 are honoured: ``TransientRetry``).
    static func headers(correlationId: String) -> [(name: String, value: String)] {
        [
            ("client-request-id", correlationId), ("return-client-request-id", "true"),
            ("x-client-SKU", LibraryInfo.name), ("x-client-Ver", LibraryInfo.version), ("x-client-OS", "linux"),
            ("x-ms-lib-capability", "retry-after, h429"), ("Accept", "application/json"),
        ]
    }

    /// MSAL's routing hint for a grant made for a known account: `X-AnchorMailbox:
    /// Oid:<uid>@<utid>` from its home account id (`<uid>.<utid>`).
    static func anchorMailbox(homeAccountId: String) -> [(name: String, value: String)] {
        guard let dot = homeAccountId.lastIndex(of: "."), dot != homeAccountId.startIndex else { return [] }
        let uid = homeAccountId[..<dot]
        let utid = homeAccountId[homeAccountId.index(after: dot)...]
        guard !utid.isEmpty else { return [] }
        return [("X-AnchorMailbox", "Oid:\(uid)@\(utid)")]
    }

    /// Redeems `fields` (plus `client_id` and `client_info=1`) at `endpoint`.
    /// - Throws: ``AuthError`` for OAuth errors (with the service's details), transport
    ///   failures and malformed answers; `CancellationError` when cancelled.
    /// `retrying`: the budget for transient failures (`nil`: one try, for a caller with a
    /// retry loop of its own, such as device code polling).
    /// `binding`: a bound token's request (`ssh-cert`, `pop`: its fields sent, that type expected).
    func redeem(
        _ fields: [(String, String)], at endpoint: String, correlationId: String,
        retrying budget: TransientRetry.Budget? = .oneShot, binding: TokenBinding? = nil,
        headers extra: [(name: String, value: String)] = []
    ) async throws -> TokenResponse {
        let json = try await post(
            fields + (binding?.fields ?? []), to: endpoint, correlationId: correlationId, retrying: budget, headers: extra)
        return try TokenResponse(json: json, binding: binding)
    }

    /// Posts a form and returns the JSON of a 200 answer; an error answer becomes ``AuthError``.
    /// Transient failures are tried again within `budget` (`nil`: not at all).
    func post(
        _ fields: [(String, String)], to endpoint: String, correlationId: String,
        retrying budget: TransientRetry.Budget? = .oneShot, headers extra: [(name: String, value: String)] = []
    ) async throws -> JSONValue {
        let request = HTTPRequest.form(
            url: endpoint, fields: [("client_id", clientId)] + fields + [("client_info", "1")],
            headers: Self.headers(correlationId: correlationId) + extra)
        let grantType = fields.first { $0.0 == "grant_type" }?.1
        guard let budget else { return try await postOnce(request, grantType: grantType, correlationId: correlationId) }
        var retry = TransientRetry(budget)
        while true {
            do {
                return try await postOnce(request, grantType: grantType, correlationId: correlationId)
            } catch let error as AuthError {
                guard let delay = retry.delay(after: error, interval: 1) else { throw error }
                logger.notice(
                    "the token endpoint failed; retrying",
                    metadata: [
                        "error": "\(error.kind.rawValue)", "httpStatus": "\(error.httpStatus.map(String.init) ?? "none")",
                        "retryInSeconds": "\(delay)", "attempt": "\(retry.consecutiveFailures + 1)",
                    ])
                try await clock.sleep(for: .seconds(delay))
            }
        }
    }

    /// One try: the JSON of a 200 answer, else the answer's ``AuthError``.
    private func postOnce(_ request: HTTPRequest, grantType: String?, correlationId: String) async throws -> JSONValue {
        let response = try await ServiceCall.send(request, over: transport)
        let json = try? JSONValue.parse(response.body)
        if response.status == 200 {
            guard let json, json.objectValue != nil else { throw AuthError.malformed("the token endpoint's answer is not a JSON object") }
            return json
        }
        let endpoint = OAuthEndpoint.token(grantType: grantType)
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
