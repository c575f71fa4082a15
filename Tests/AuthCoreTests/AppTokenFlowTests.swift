import AuthSeams
import AuthTestSupport
import Logging
import Synchronization
import Testing
import TokenCache

@testable import AuthCore

/// App tokens with a client assertion (workload identity federation) against a scripted token
/// endpoint and an in-memory cache.
@Suite struct AppTokenFlowTests {
    let clock = ManualClock()
    let cache = TokenCache(store: MemoryTokenCacheStore())
    static let arm = "https://management.azure.com/.default"

    /// A source that hands out a new assertion each time and counts them.
    final class CountingSource: ClientAssertionSource {
        let given = Mutex(0)
        let expiresOn: Int64
        init(expiresOn: Int64) { self.expiresOn = expiresOn }
        var name: String { "test source" }
        func assertion(transport: any HTTPTransport) async throws -> ClientAssertion {
            let n = given.withLock {
                $0 += 1
                return $0
            }
            return ClientAssertion(jwt: Tokens.jwt(#"{"sub":"job","n":\#(n),"exp":\#(expiresOn)}"#))
        }
    }

    private func app(_ transport: FakeHTTPTransport, source: CountingSource) throws -> PublicClientApplication {
        var configuration = ClientConfiguration(
            clientId: "app-1", authority: try Authority("https://login.microsoftonline.com/tid-1"), defaultScopes: [Self.arm])
        configuration.clientAssertion = source
        let dependencies = AuthDependencies(
            transport: transport, cache: cache, clock: clock, browser: UnusedBrowser(),
            listener: UnusedListener(), logger: Logger(label: "test"))
        return PublicClientApplication(configuration: configuration, dependencies: dependencies)
    }

    private func transport(delay: Duration = .zero, status: Int = 200) -> FakeHTTPTransport {
        FakeHTTPTransport(delay: delay) { request in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            if status != 200 {
                return HTTPResponse(
                    status: status,
                    body: Array(
                        #"{"error":"invalid_client","error_description":"AADSTS700024: Client assertion is not within its valid time range.","error_codes":[700024]}"#
                            .utf8))
            }
            let n = FakeHTTPTransport.fields(request)["client_assertion"].map { String($0.suffix(12)) } ?? "none"
            return HTTPResponse(
                status: 200, body: Array(#"{"token_type":"Bearer","expires_in":3600,"access_token":"app-\#(n)"}"#.utf8))
        }
    }

    @Test func exchangesAFreshAssertionOnceThenServesTheCache() async throws {
        let source = CountingSource(expiresOn: clock.now() + 600)
        let http = transport()
        let app = try app(http, source: source)
        let first = try await app.acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(!first.fromCache && first.account.username == "app-1" && first.account.homeAccountId.isEmpty)
        let fields = FakeHTTPTransport.fields(try #require(http.requests(to: "/token").first))
        #expect(fields["grant_type"] == "client_credentials" && fields["scope"] == Self.arm)
        #expect(fields["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        #expect(fields["refresh_token"] == nil)
        let second = try await app.acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(second.fromCache && second.accessToken == first.accessToken)
        #expect(http.requests(to: "/token").count == 1 && source.given.withLock { $0 } == 1)
        let document = try cache.snapshot()
        let inventory = document.inventory(clientId: "app-1")
        #expect(inventory.refreshTokenAccounts.isEmpty && inventory.accessTokens.map(\.homeAccountId) == [""])
    }

    @Test func concurrentRequestsShareOneExchange() async throws {
        let source = CountingSource(expiresOn: clock.now() + 600)
        let http = transport(delay: .milliseconds(50))
        let app = try app(http, source: source)
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await app.acquireTokenSilently(SilentRequest(), correlationId: "c").accessToken } }
            var tokens = Set<String>()
            for try await token in group { tokens.insert(token) }
            #expect(tokens.count == 1)
        }
        #expect(http.requests(to: "/token").count == 1 && source.given.withLock { $0 } == 1)
    }

    @Test func aTokenNearItsExpiryIsRenewedWithANewAssertion() async throws {
        let source = CountingSource(expiresOn: clock.now() + 600)
        let http = transport()
        let app = try app(http, source: source)
        _ = try await app.acquireTokenSilently(SilentRequest(), correlationId: "c")
        clock.advance(3600 - 299)  // inside the 5-minute margin
        let renewed = try await app.acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(!renewed.fromCache && source.given.withLock { $0 } == 2)
        let assertions = http.requests(to: "/token").compactMap { FakeHTTPTransport.fields($0)["client_assertion"] }
        #expect(assertions.count == 2 && assertions[0] != assertions[1])
    }

    @Test func aRefusedAssertionNamesTheSourceAndItsAge() async throws {
        let source = CountingSource(expiresOn: clock.now() - 30)
        let http = transport(status: 401)
        let app = try app(http, source: source)
        let error = await #expect(throws: AuthError.self) { try await app.acquireTokenSilently(SilentRequest(), correlationId: "c") }
        #expect(error?.message.contains("test source") == true && error?.message.contains("AADSTS700024") == true)
        #expect(error?.message.contains("expired 30 s ago") == true, "\(error?.message ?? "")")
        #expect(http.requests(to: "/token").count == 1)  // no retry
    }

    @Test func userSignInsAreRefused() async throws {
        let app = try app(transport(), source: CountingSource(expiresOn: clock.now() + 600))
        let error = await #expect(throws: AuthError.self) {
            try await app.acquireTokenByDeviceCode(DeviceCodeRequest(onUserCode: { _ in }), correlationId: "c")
        }
        #expect(error?.kind == .invalidConfiguration && error?.message.contains("signs in as the app app-1") == true)
    }

    @Test func anAppTokenNeedsATenant() async throws {
        var configuration = ClientConfiguration(clientId: "app-1", authority: try Authority("https://login.microsoftonline.com/organizations"))
        configuration.clientAssertion = CountingSource(expiresOn: clock.now() + 600)
        let app = PublicClientApplication(
            configuration: configuration,
            dependencies: AuthDependencies(
                transport: transport(), cache: cache, clock: clock, browser: UnusedBrowser(), listener: UnusedListener(),
                logger: Logger(label: "test")))
        let error = await #expect(throws: AuthError.self) { try await app.acquireTokenSilently(SilentRequest(), correlationId: "c") }
        #expect(error?.message.contains("needs a tenant") == true)
    }

    @Test func theAssertionsExpiryIsReadFromItsPayload() {
        #expect(ClientAssertion(jwt: Tokens.jwt(#"{"exp":1700000000}"#)).expiresOn == 1_700_000_000)
        #expect(ClientAssertion(jwt: "not.a-jwt.").expiresOn == nil)
    }
}
