import AuthCore
import AuthSeams
import AuthTestSupport
import JSON
import Logging
import Synchronization
import Testing
import TokenCache

@testable import Graph

/// `callGraph`'s logic against a scripted Graph and token endpoint.
@Suite struct GraphClientTests {
    let clock = ManualClock()
    let cache = TokenCache(store: MemoryTokenCacheStore())

    init() throws {
        try cache.save(
            TokenResponseRecord(
                clientId: "client", environment: "login.microsoftonline.com", realm: "common", homeAccountId: "oid-1.tid-1",
                localAccountId: "oid-1", username: "alice@contoso.com", scopes: ["user.read"], accessToken: "at-1",
                cachedAt: clock.now(), expiresOn: clock.now() + 3600, refreshToken: "rt-1",
                idToken: Tokens.jwt(#"{"oid":"oid-1","tid":"tid-1","preferred_username":"alice@contoso.com"}"#)))
    }

    /// Graph answers with `graph(request, callNumber)`; the token endpoint with a fresh token.
    private func client(graph: @escaping @Sendable (HTTPRequest, Int) -> HTTPResponse) throws -> (GraphClient, FakeHTTPTransport) {
        let calls = Mutex(0)
        let http = FakeHTTPTransport { request in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            if request.url.hasSuffix("/token") { return Tokens.tokenResponse(accessToken: "at-claims") }
            return graph(
                request,
                calls.withLock {
                    $0 += 1
                    return $0
                })
        }
        let app = PublicClientApplication(
            configuration: ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common")),
            dependencies: AuthDependencies(
                transport: http, cache: cache, clock: clock, browser: UnusedBrowser(),
                listener: UnusedListener(), logger: Logger(label: "test")))
        var graphClient = GraphClient(app: app, transport: http, endpoint: "https://graph.microsoft.com/", logger: Logger(label: "test"))
        graphClient.maxRetryWait = .seconds(2)
        graphClient.clock = clock
        return (graphClient, http)
    }

    private static func json(_ status: Int, _ body: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(body.utf8))
    }

    @Test func callsMeWithTheCachedToken() async throws {
        let (graph, http) = try client { _, _ in Self.json(200, #"{"displayName":"Alice"}"#) }
        var request = GraphRequest()
        request.query = [("$select", "displayName")]
        let response = try await graph.call(request, correlationId: "c")
        #expect(response.status == 200)
        #expect(response.body["displayName"] == "Alice")
        let sent = try #require(http.requests.last)
        #expect(sent.url == "https://graph.microsoft.com/v1.0/me?%24select=displayName")
        #expect(sent.headers.contains { $0.name == "Authorization" && $0.value == "Bearer at-1" })
        #expect(sent.headers.contains { $0.name == "client-request-id" && $0.value == "c" })
    }

    @Test func returnsNonJSONBodiesAsText() async throws {
        let (graph, _) = try client { _, _ in HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array("hello".utf8)) }
        #expect(try await graph.call(GraphRequest(), correlationId: "c").body == "hello")
    }

    @Test func honoursRetryAfterOnThrottling() async throws {
        let (graph, http) = try client { _, n in
            n == 1 ? Self.json(429, #"{"error":{"code":"TooManyRequests"}}"#, headers: [("Retry-After", "1")]) : Self.json(200, "{}")
        }
        let response = try await graph.call(GraphRequest(), correlationId: "c")
        #expect(response.status == 200)
        #expect(http.requests(to: "/v1.0/me").count == 2)
        #expect(clock.sleeps == [.seconds(1)])  // the wait was virtual: the test does not sleep
    }

    @Test func returnsThrottlingWhenRetryAfterIsTooLong() async throws {
        let (graph, _) = try client { _, _ in Self.json(503, "{}", headers: [("Retry-After", "120")]) }
        let response = try await graph.call(GraphRequest(), correlationId: "c")
        #expect(response.status == 503)
        #expect(response.headers["retry-after"] == "120")
    }

    @Test func retriesOnceWithTheClaimsOfAChallenge() async throws {
        let claims = #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#
        let challenge = #"Bearer realm="", error="insufficient_claims", claims=""# + Base64URL.encode(Array(claims.utf8)) + #"""#
        let (graph, http) = try client { request, n in
            n == 1 ? Self.json(401, "{}", headers: [("WWW-Authenticate", challenge)]) : Self.json(200, #"{"ok":true}"#)
        }
        let response = try await graph.call(GraphRequest(), correlationId: "c")
        #expect(response.status == 200)
        let refresh = try #require(http.requests(to: "/token").first)
        #expect(FakeHTTPTransport.fields(refresh)["claims"] == claims)
        #expect(http.requests.last?.headers.contains { $0.value == "Bearer at-claims" } == true)
    }

    @Test func reportsInteractionRequiredWithClaimsWhenTheChallengePersists() async throws {
        let challenge = #"Bearer error="insufficient_claims", claims="eyJhY2Nlc3NfdG9rZW4iOnt9fQ==""#
        let (graph, _) = try client { _, _ in Self.json(401, "{}", headers: [("WWW-Authenticate", challenge)]) }
        do {
            _ = try await graph.call(GraphRequest(), correlationId: "c")
            Issue.record("expected interactionRequired")
        } catch let error as AuthError {
            #expect(error.kind == .interactionRequired)
            #expect(error.claims == #"{"access_token":{}}"#)
        }
    }

    @Test func followsNextLinksWhenAskedForAllPages() async throws {
        let (graph, _) = try client { request, _ in
            if request.url.contains("skiptoken=2") { return Self.json(200, #"{"value":[3]}"#) }
            if request.url.contains("skiptoken=1") {
                return Self.json(200, #"{"value":[2],"@odata.nextLink":"https://graph.microsoft.com/v1.0/users?skiptoken=2"}"#)
            }
            return Self.json(200, #"{"value":[1],"@odata.nextLink":"https://graph.microsoft.com/v1.0/users?skiptoken=1"}"#)
        }
        var request = GraphRequest()
        request.path = "/users"
        request.allPages = true
        let response = try await graph.call(request, correlationId: "c")
        #expect(response.body["value"] == [1, 2, 3])
        #expect(response.pages == 3)
        #expect(response.body["@odata.nextLink"] == nil)
    }

    @Test func anAnswerOverTheLimitIsResponseTooLarge() async throws {
        var (graph, http) = try client { _, _ in Self.json(200, #"{"value":"\#(String(repeating: "x", count: 100))"}"#) }
        graph.maxResponseBytes = 64
        do {
            _ = try await graph.call(GraphRequest(), correlationId: "c")
            Issue.record("expected responseTooLarge")
        } catch let error as AuthError {
            #expect(error.kind == .responseTooLarge)
            #expect(error.limit == 64)
        }
        #expect(http.requests(to: "/v1.0/me").map(\.maxResponseBytes) == [64])
    }

    @Test func allPagesTogetherStayWithinTheLimit() async throws {
        let page = #"{"value":["\#(String(repeating: "x", count: 80))"],"@odata.nextLink":"https://graph.microsoft.com/v1.0/users?skiptoken=1"}"#
        var (graph, http) = try client { _, _ in Self.json(200, page) }
        graph.maxResponseBytes = page.utf8.count * 3 - 1  // two pages fit, not three
        var request = GraphRequest()
        request.path = "/users"
        request.allPages = true
        do {
            _ = try await graph.call(request, correlationId: "c")
            Issue.record("expected responseTooLarge")
        } catch let error as AuthError {
            #expect(error.kind == .responseTooLarge)
            #expect(error.limit == graph.maxResponseBytes)  // the whole answer's limit, not the last page's share
        }
        let limits = http.requests.filter { $0.url.contains("/v1.0/users") }.map(\.maxResponseBytes)
        #expect(limits == [graph.maxResponseBytes, graph.maxResponseBytes - page.utf8.count, graph.maxResponseBytes - 2 * page.utf8.count])
    }

    @Test func refusesANextLinkToAnotherHost() async throws {
        let (graph, _) = try client { _, _ in Self.json(200, #"{"value":[1],"@odata.nextLink":"https://evil.example.com/steal"}"#) }
        var request = GraphRequest()
        request.allPages = true
        await #expect(throws: AuthError.self) { _ = try await graph.call(request, correlationId: "c") }
    }

    @Test func sendsJSONBodies() async throws {
        let (graph, http) = try client { _, _ in Self.json(200, #"{"responses":[]}"#) }
        var request = GraphRequest()
        request.method = "POST"
        request.path = "/$batch"
        request.body = ["requests": [["id": "1", "method": "GET", "url": "/me"]]]
        _ = try await graph.call(request, correlationId: "c")
        let sent = try #require(http.requests.last)
        #expect(sent.method == "POST")
        #expect(sent.body.map { String(decoding: $0, as: UTF8.self) } == #"{"requests":[{"id":"1","method":"GET","url":"/me"}]}"#)
        #expect(sent.headers.contains { $0.name == "Content-Type" && $0.value == "application/json" })
    }
}
