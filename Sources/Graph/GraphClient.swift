import AuthCore
import AuthSeams
import JSON
import Logging

/// Calls Microsoft Graph with a token acquired silently for the request's account.
///
/// - 429/503/504 with `Retry-After` are retried (at most ``maxRetries`` times, each wait at
///   most ``maxRetryWait``); beyond that the throttled answer is returned as the result.
/// - A 401 with a claims challenge (`WWW-Authenticate: ... claims="..."`) is retried once
///   with a token acquired silently for those claims; if that cannot be done without the
///   user, `interactionRequired` carries the claims for `acquireToken`.
/// - Never prompts: a missing or expired sign-in is `interactionRequired`.
/// - An answer over ``maxResponseBytes`` (with `allPages`, the pages together) is not read
///   further: `responseTooLarge` (-51004) with the limit.
public struct GraphClient: Sendable {
    public let app: PublicClientApplication
    public let transport: any HTTPTransport
    /// `https://graph.microsoft.com/`.
    public let endpoint: String
    public var maxRetries = 3
    public var maxRetryWait: Duration = .seconds(10)
    /// The largest answer relayed, in bytes: the sidecar sets its message limit
    /// (`--max-message-size`, 4 MiB by default), since the answer goes back as one message.
    public var maxResponseBytes = 4 << 20
    /// Waits between throttled tries (tests pass a clock that sleeps in virtual time).
    public var clock: any AuthClock = SystemClock()
    let logger: Logger

    public init(app: PublicClientApplication, transport: any HTTPTransport, endpoint: String, logger: Logger) {
        self.app = app
        self.transport = transport
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.logger = logger
    }

    public func call(_ request: GraphRequest, correlationId: String) async throws -> GraphResponse {
        var silent = SilentRequest()
        silent.scopes = request.scopes
        silent.account = request.account
        var token = try await checked(
            try await app.acquireTokenSilently(silent, correlationId: correlationId), silent, request.tokenCheck, correlationId: correlationId)
        var url = try url(for: request)
        var response = try await send(request, url: url, token: token.accessToken, correlationId: correlationId)
        if response.status == 401, let claims = ClaimsChallenge.claims(in: response.header("WWW-Authenticate")) {
            logger.info("graph answered with a claims challenge; acquiring a token for it")
            silent.claims = claims
            silent.account = .homeAccountId(token.account.homeAccountId)
            do {
                token = try await app.acquireTokenSilently(silent, correlationId: correlationId)
            } catch var error as AuthError {
                error.kind = .interactionRequired
                error.claims = claims
                error.message = "Graph requires claims the cached sign-in cannot satisfy; call acquireToken with these claims (\(error.message))"
                throw error
            }
            token = try await checked(token, silent, request.tokenCheck, correlationId: correlationId)
            response = try await send(request, url: url, token: token.accessToken, correlationId: correlationId)
            if response.status == 401, ClaimsChallenge.claims(in: response.header("WWW-Authenticate")) != nil {
                var error = AuthError(.interactionRequired, "Graph still requires claims after a silent retry; call acquireToken with these claims")
                error.claims = claims
                error.httpStatus = 401
                throw error
            }
        }
        var result = GraphResponse(status: response.status, headers: Self.headers(response), body: Self.body(response), pages: 1)
        guard request.allPages, response.status == 200 else { return result }
        var received = response.body.count
        while result.pages < request.maxPages, let next = result.body["@odata.nextLink"]?.stringValue {
            url = try checkedNextLink(next)
            let page = try await nextPage(request, url: url, token: token.accessToken, correlationId: correlationId, received: received)
            received += page.body.count
            guard page.status == 200 else { break }
            result.pages += 1
            result.body = Self.merge(result.body, with: Self.body(page))
        }
        return result
    }

    func url(for request: GraphRequest) throws(AuthError) -> String {
        let path = request.path.hasPrefix("/") ? request.path : "/" + request.path
        guard !path.contains("://"), !path.contains("/../") else {
            throw AuthError(.invalidConfiguration, "path must be a path under the Graph endpoint")
        }
        let query = request.query.isEmpty ? "" : (path.contains("?") ? "&" : "?") + FormEncoding.query(request.query)
        return "\(endpoint)/\(request.apiVersion)\(path)\(query)"
    }

    /// A nextLink must stay on the Graph host: the token goes only there.
    private func checkedNextLink(_ link: String) throws(AuthError) -> String {
        guard let next = URLParts(link), let base = URLParts(endpoint), next.origin == base.origin else {
            throw AuthError(.malformedResponse, "Graph's @odata.nextLink points to another host; not following it with the token")
        }
        return link
    }

    /// A following page, limited to what is left of ``maxResponseBytes`` after `received` bytes.
    private func nextPage(
        _ request: GraphRequest, url: String, token: String, correlationId: String, received: Int
    ) async throws -> HTTPResponse {
        do {
            return try await send(
                request, url: url, token: token, correlationId: correlationId, followingPage: true,
                limit: maxResponseBytes - received)
        } catch var error as AuthError where error.kind == .responseTooLarge {
            error.limit = maxResponseBytes
            error.message = "Microsoft Graph's pages together are larger than \(maxResponseBytes) bytes; the transfer was stopped"
            throw error
        }
    }

    private func send(
        _ request: GraphRequest, url: String, token: String, correlationId: String,
        followingPage: Bool = false, limit: Int? = nil
    ) async throws -> HTTPResponse {
        var headers = request.headers.filter { $0.0.lowercased() != "authorization" }.map { (name: $0.0, value: $0.1) }
        headers.append(("Authorization", "Bearer \(token)"))
        if !headers.contains(where: { $0.name.lowercased() == "client-request-id" }) {
            headers.append(("client-request-id", correlationId))
        }
        var body: [UInt8]?
        if !followingPage, let json = request.body {
            if case .string(let text) = json, headers.contains(where: { $0.name.lowercased() == "content-type" }) {
                body = Array(text.utf8)
            } else {
                body = json.serialized()
                if !headers.contains(where: { $0.name.lowercased() == "content-type" }) { headers.append(("Content-Type", "application/json")) }
            }
        }
        let http = HTTPRequest(
            method: followingPage ? "GET" : request.method, url: url, headers: headers, body: body, timeout: request.timeout,
            maxResponseBytes: limit ?? maxResponseBytes)
        var attempt = 0
        while true {
            let response = try await ServiceCall.send(http, over: transport, service: "Microsoft Graph")
            guard [429, 503, 504].contains(response.status), attempt < maxRetries else { return response }
            let wait = Duration.seconds(Int(response.header("Retry-After") ?? "") ?? 1)
            guard wait <= maxRetryWait else { return response }
            attempt += 1
            logger.info("graph throttled; retrying", metadata: ["status": "\(response.status)", "attempt": "\(attempt)"])
            try await clock.sleep(for: wait)
        }
    }

    static func headers(_ response: HTTPResponse) -> JSONObject {
        var headers = JSONObject()
        for (name, value) in response.headers {
            headers[name] = .string(headers[name]?.stringValue.map { "\($0), \(value)" } ?? value)
        }
        return headers
    }

    static func body(_ response: HTTPResponse) -> JSONValue {
        if response.body.isEmpty { return .null }
        if let json = try? JSONValue.parse(response.body) { return json }
        return .string(response.bodyText)
    }

    /// The first page with `value` extended by the next page's, and the next page's nextLink.
    static func merge(_ first: JSONValue, with next: JSONValue) -> JSONValue {
        guard var object = first.objectValue, let values = object["value"]?.arrayValue,
            let more = next["value"]?.arrayValue
        else { return first }
        object["value"] = .array(values + more)
        object["@odata.nextLink"] = next["@odata.nextLink"]
        return .object(object)
    }
}
