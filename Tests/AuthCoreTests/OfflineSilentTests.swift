import AuthSeams
import AuthTestSupport
import JSON
import Logging
import Synchronization
import Testing
import TokenCache

@testable import AuthCore

#if canImport(Glibc)
    import Glibc
#endif

/// Offline first: a valid cached token needs no network, for every authority kind; discovery
/// answers are kept for a day; processes sharing a cache refresh a token once.
@Suite struct OfflineSilentTests {
    let clock = ManualClock()

    /// A transport that fails every request (the service unreachable), recording them.
    static func unreachable() -> FakeHTTPTransport {
        FakeHTTPTransport { _ throws(HTTPError) in throw .network("connection refused") }
    }

    /// A transport answering discovery and the token endpoint (`token(n)` for the n-th call).
    static func service(delay: Duration = .zero, token: @escaping @Sendable (Int) -> HTTPResponse) -> FakeHTTPTransport {
        let calls = Mutex(0)
        return FakeHTTPTransport(delay: delay) { request in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            return token(
                calls.withLock {
                    $0 += 1
                    return $0
                })
        }
    }

    func app(
        _ authority: String, kind: Authority.Kind? = nil, known: [String] = [], cache: TokenCache,
        transport: FakeHTTPTransport
    ) throws -> PublicClientApplication {
        var configuration = ClientConfiguration(
            clientId: "client", authority: try Authority(authority, declared: kind),
            knownAuthorities: known)
        configuration.instanceDiscovery = true
        return PublicClientApplication(
            configuration: configuration,
            dependencies: AuthDependencies(
                transport: transport, cache: cache, clock: clock, browser: UnusedBrowser(), listener: UnusedListener(),
                logger: Logger(label: "test")))
    }

    func seed(_ cache: TokenCache, environment: String, realm: String, expiresIn: Int64 = 3600) throws {
        try cache.save(
            TokenResponseRecord(
                clientId: "client", environment: environment, realm: realm, homeAccountId: "oid-1.tid-1",
                localAccountId: "oid-1", username: "alice@contoso.com", scopes: ["User.Read"], accessToken: "at-\(realm)",
                cachedAt: clock.now(), expiresOn: clock.now() + expiresIn, refreshToken: "rt-0",
                idToken: Tokens.jwt(#"{"oid":"oid-1","tid":"tid-1","preferred_username":"alice@contoso.com"}"#)))
    }

    @Test(
        arguments: [
            ("https://login.microsoftonline.com/common", nil, "login.microsoftonline.com", "common", [String]()),
            ("https://login.microsoftonline.com/organizations", nil, "login.windows.net", "tid-1", []),  // home tenant, alias
            ("https://login.microsoftonline.com/consumers", nil, "login.microsoftonline.com", "consumers", []),
            ("https://login.microsoftonline.com/tid-1", nil, "login.microsoftonline.com", "tid-1", []),
            ("https://login.microsoftonline.com/contoso.com", nil, "login.microsoftonline.com", "contoso.com", []),
            (
                "https://fabrikamb2c.b2clogin.com/tfp/fabrikamb2c.onmicrosoft.com/B2C_1_susi", nil, "fabrikamb2c.b2clogin.com",
                "fabrikamb2c.onmicrosoft.com", ["fabrikamb2c.b2clogin.com"]
            ),
            ("https://contoso.ciamlogin.com/", nil, "contoso.ciamlogin.com", "contoso.onmicrosoft.com", []),
            ("https://idp.example/realms/a", Authority.Kind.oidc, "idp.example/realms/a", "realms", []),
        ] as [(String, Authority.Kind?, String, String, [String])])
    func aValidCachedTokenNeedsNoNetwork(
        authority: String, kind: Authority.Kind?, environment: String, realm: String,
        known: [String]
    ) async throws {
        let cache = TokenCache(store: MemoryTokenCacheStore())
        try seed(cache, environment: environment, realm: realm)
        let http = Self.unreachable()
        let result = try await app(authority, kind: kind, known: known, cache: cache, transport: http)
            .acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(result.accessToken == "at-\(realm)" && result.fromCache)
        #expect(http.requests.isEmpty, "no request at all: \(http.requests.map(\.url))")
    }

    @Test func anExpiredTokenWithTheServiceUnreachableIsANetworkError() async throws {
        let cache = TokenCache(store: MemoryTokenCacheStore())
        try seed(cache, environment: "login.microsoftonline.com", realm: "common", expiresIn: 10)
        let application = try app("https://login.microsoftonline.com/common", cache: cache, transport: Self.unreachable())
        let error = await #expect(throws: AuthError.self) {
            _ = try await application.acquireTokenSilently(SilentRequest(), correlationId: "c")
        }
        #expect(error?.kind == .networkError)
    }

    @Test func aTokenDueForRefreshIsServedWhenTheServiceIsUnreachable() async throws {
        let cache = TokenCache(store: MemoryTokenCacheStore())
        try cache.save(
            TokenResponseRecord(
                clientId: "client", environment: "login.microsoftonline.com", realm: "common", homeAccountId: "oid-1.tid-1",
                localAccountId: "oid-1", username: "alice@contoso.com", scopes: ["User.Read"], accessToken: "still-valid",
                cachedAt: clock.now(), expiresOn: clock.now() + 3600, refreshOn: clock.now() + 60, refreshToken: "rt-0"))
        clock.advance(120)  // past refresh_on: a refresh is due, the token still valid for an hour
        let http = Self.unreachable()
        let result = try await app("https://login.microsoftonline.com/common", cache: cache, transport: http)
            .acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(result.accessToken == "still-valid" && result.fromCache)
        #expect(!http.requests.isEmpty, "the refresh was tried")
    }

    @Test func discoveryIsKeptSoTheNextProcessRefreshesWithOneRequest() async throws {
        let cache = TokenCache(store: MemoryTokenCacheStore())
        try seed(cache, environment: "login.microsoftonline.com", realm: "common", expiresIn: 10)
        let first = Self.service { n in Tokens.tokenResponse(accessToken: "fresh-\(n)") }
        _ = try await app("https://login.microsoftonline.com/common", cache: cache, transport: first)
            .acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(first.requests.count == 3, "instance discovery, OIDC discovery, token: \(first.requests.map(\.url))")
        clock.advance(3600)  // the new token expired too; a new process, same cache
        let second = Self.service { n in Tokens.tokenResponse(accessToken: "again-\(n)") }
        let result = try await app("https://login.microsoftonline.com/common", cache: cache, transport: second)
            .acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(result.accessToken == "again-1")
        #expect(second.requests.map(\.url) == ["https://login.microsoftonline.com/common/oauth2/v2.0/token"])
    }

    @Test func aStaleOrCorruptKeptAnswerIsFetchedAgain() async throws {
        let cache = TokenCache(store: MemoryTokenCacheStore())
        try seed(cache, environment: "login.microsoftonline.com", realm: "common", expiresIn: 10)
        let first = Self.service { _ in Tokens.tokenResponse(accessToken: "fresh", expiresIn: 60) }
        _ = try await app("https://login.microsoftonline.com/common", cache: cache, transport: first)
            .acquireTokenSilently(SilentRequest(), correlationId: "c")
        clock.advance(PersistedDiscovery.lifetime + 1)
        let stale = Self.service { _ in Tokens.tokenResponse(accessToken: "after-a-day") }
        _ = try await app("https://login.microsoftonline.com/common", cache: cache, transport: stale)
            .acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(stale.requests.count == 3, "both discoveries fetched again")
        // A kept answer that is not a valid document: ignored, fetched again.
        let key = PersistedDiscovery.metadataKey(try Authority("https://login.microsoftonline.com/common"))
        try cache.saveDiscoveryRecord(["fetched_at": .int(clock.now()), "document": ["token_endpoint": 7]], forKey: key)
        clock.advance(3600)
        let corrupt = Self.service { _ in Tokens.tokenResponse(accessToken: "repaired") }
        let result = try await app("https://login.microsoftonline.com/common", cache: cache, transport: corrupt)
            .acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(result.accessToken == "repaired")
        #expect(corrupt.requests(to: "openid-configuration").count == 1)
    }

    @Test func twoProcessesSharingACacheFileRefreshOnce() async throws {
        let directory = "/tmp/auth-offline-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = system("rm -rf '\(directory)'") }
        let path = directory + "/cache.json"
        func process() -> TokenCache {
            TokenCache(store: FileTokenCacheStore(path: path), refreshLock: FileRefreshLock(path: path + ".refresh.lock"))
        }
        try seed(process(), environment: "login.microsoftonline.com", realm: "common", expiresIn: 10)
        let http = Self.service(delay: .milliseconds(300)) { n in Tokens.tokenResponse(accessToken: "fresh-\(n)", refreshToken: "rt-\(n)") }
        // Two applications, each with its own cache store, coordinator and lock descriptor:
        // what two processes have.
        let a = try app("https://login.microsoftonline.com/common", cache: process(), transport: http)
        let b = try app("https://login.microsoftonline.com/common", cache: process(), transport: http)
        async let first = a.acquireTokenSilently(SilentRequest(), correlationId: "a")
        async let second = b.acquireTokenSilently(SilentRequest(), correlationId: "b")
        let tokens = try await [first.accessToken, second.accessToken]
        #expect(tokens == ["fresh-1", "fresh-1"])
        #expect(http.requests(to: "/token").count == 1)
    }
}
