import AuthSeams
import AuthTestSupport
import Logging
import Synchronization
import Testing
import TokenCache

@testable import AuthCore

/// The silent flow against a scripted token endpoint and an in-memory cache.
@Suite struct SilentFlowTests {
    let clock = ManualClock()
    let cache = TokenCache(store: MemoryTokenCacheStore())
    static let authority = "https://login.microsoftonline.com/common"

    private func app(_ transport: FakeHTTPTransport) throws -> PublicClientApplication {
        let configuration = ClientConfiguration(clientId: "client", authority: try Authority(Self.authority))
        let dependencies = AuthDependencies(
            transport: transport, cache: cache, clock: clock, browser: UnusedBrowser(),
            listener: UnusedListener(), logger: Logger(label: "test"))
        return PublicClientApplication(configuration: configuration, dependencies: dependencies)
    }

    /// A transport: discovery, and the token endpoint answering with `token`.
    private func transport(delay: Duration = .zero, token: @escaping @Sendable (Int) -> HTTPResponse) -> FakeHTTPTransport {
        let calls = Mutex(0)
        return FakeHTTPTransport(delay: delay) { request in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            let n = calls.withLock {
                $0 += 1
                return $0
            }
            return token(n)
        }
    }

    private func seed(expiresIn: Int64 = 3600, refreshIn: Int64? = nil, scopes: [String] = ["User.Read"]) throws {
        try cache.save(
            TokenResponseRecord(
                clientId: "client", environment: "login.microsoftonline.com", realm: "common", homeAccountId: "oid-1.tid-1",
                localAccountId: "oid-1", username: "alice@contoso.com", scopes: scopes, accessToken: "at-cached",
                cachedAt: clock.now(), expiresOn: clock.now() + expiresIn, refreshOn: refreshIn.map { clock.now() + $0 },
                refreshToken: "rt-0",
                idToken: Tokens.jwt(#"{"oid":"oid-1","tid":"tid-1","preferred_username":"alice@contoso.com"}"#)))
    }

    @Test func servesAValidCachedTokenWithoutCallingTheTokenEndpoint() async throws {
        try seed()
        let http = transport { _ in Tokens.tokenResponse(accessToken: "fresh") }
        let result = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(result.accessToken == "at-cached")
        #expect(result.fromCache)
        #expect(result.account.username == "alice@contoso.com")
        #expect(http.requests(to: "/token").isEmpty)
    }

    /// A list naming no resource scope is the default scopes (`user.read`), never the first
    /// cached token whatever it is for (every token's scopes include an empty list).
    @Test(arguments: [[], [""], ["openid"], ["profile"], ["offline_access"], ["openid", "profile", "offline_access"]] as [[String]])
    func aScopeListNamingNoResourceMeansTheDefaultScopes(scopes: [String]) async throws {
        try seed(scopes: ["Mail.Read"])
        let http = transport { _ in Tokens.tokenResponse(accessToken: "fresh-user-read", scope: "User.Read openid profile offline_access") }
        let app = try app(http)
        var request = SilentRequest()
        request.scopes = scopes
        #expect(app.cachedSilentAnswer(request, mayRead: true) == nil, "the quick path found the Mail.Read token")
        let result = try await app.acquireTokenSilently(request, correlationId: "c")
        #expect(result.accessToken == "fresh-user-read" && result.scopes == ["User.Read"])
        let asked = http.requests(to: "/token").first.map { String(decoding: $0.body ?? [], as: UTF8.self) } ?? ""
        #expect(asked.contains("scope=user.read"), "\(asked)")
    }

    @Test func readsTheCacheAFixedNumberOfTimesWhateverTheNumberOfAccounts() async throws {
        func transactions(accounts: Int) async throws -> Int {
            let store = CountingTokenCacheStore()
            let cache = TokenCache(store: store)
            for n in 0..<accounts {
                try cache.save(
                    TokenResponseRecord(
                        clientId: "client", environment: "login.microsoftonline.com", realm: "common",
                        homeAccountId: "oid-\(n).tid-1", localAccountId: "oid-\(n)", username: "user\(n)@contoso.com",
                        scopes: ["User.Read"], accessToken: "at-\(n)", cachedAt: clock.now(), expiresOn: clock.now() + 3600,
                        refreshToken: "rt-\(n)", idToken: Tokens.jwt(#"{"oid":"oid-\#(n)","tid":"tid-1"}"#)))
            }
            let http = transport { _ in Tokens.tokenResponse(accessToken: "x") }
            let app = PublicClientApplication(
                configuration: ClientConfiguration(clientId: "client", authority: try Authority(Self.authority)),
                dependencies: AuthDependencies(
                    transport: http, cache: cache, clock: clock, browser: UnusedBrowser(),
                    listener: UnusedListener(), logger: Logger(label: "test")))
            var request = SilentRequest()
            request.account = .homeAccountId("oid-0.tid-1")
            let before = (store.transactions, store.reads)
            #expect(try await app.acquireTokenSilently(request, correlationId: "c").fromCache)
            #expect(store.transactions == before.0, "a cached token takes no lock")
            return store.reads - before.1
        }
        #expect(try await transactions(accounts: 10) == 1, "one read of the cache: account, token and ID token")
        #expect(try await transactions(accounts: 1) == 1)
    }

    @Test func refreshesOnceForManyConcurrentRequestsWhenExpired() async throws {
        try seed(expiresIn: 200)  // inside the 5-minute margin: expired
        let http = transport(delay: .milliseconds(100)) { n in Tokens.tokenResponse(accessToken: "fresh-\(n)", refreshToken: "rt-\(n)") }
        let application = try app(http)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await application.acquireTokenSilently(SilentRequest(), correlationId: "c").accessToken } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(tokens.count == 50)
        #expect(Set(tokens) == ["fresh-1"])
        #expect(http.requests(to: "/token").count == 1)
        let fields = FakeHTTPTransport.fields(http.requests(to: "/token")[0])
        #expect(fields["grant_type"] == "refresh_token")
        #expect(fields["refresh_token"] == "rt-0")
        #expect(fields["scope"] == "user.read openid profile offline_access")  // the default scopes
        #expect(
            try cache.read {
                $0.refreshTokens(
                    homeAccountId: "oid-1.tid-1", environments: ["login.microsoftonline.com"], clientId: "client", familyId: nil)
            }.first?.secret == "rt-1")
    }

    @Test func refreshesProactivelyAfterRefreshOn() async throws {
        try seed(expiresIn: 3600, refreshIn: 600)
        let http = transport { _ in Tokens.tokenResponse(accessToken: "proactive") }
        let application = try app(http)
        #expect(try await application.acquireTokenSilently(SilentRequest(), correlationId: "c").accessToken == "at-cached")
        clock.advance(700)  // past refresh_on, long before expiry
        let result = try await application.acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(result.accessToken == "proactive")
        #expect(http.requests(to: "/token").count == 1)
    }

    @Test func keepsTheCachedTokenWhenAProactiveRefreshFails() async throws {
        try seed(expiresIn: 3600, refreshIn: 600)
        clock.advance(700)
        let http = transport { _ in HTTPResponse(status: 500, headers: [("Retry-After", "0")], body: Array("down".utf8)) }
        let result = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(result.accessToken == "at-cached")
        #expect(result.fromCache)
    }

    @Test func forceRefreshBypassesAValidToken() async throws {
        try seed()
        let http = transport { _ in Tokens.tokenResponse(accessToken: "forced") }
        var request = SilentRequest()
        request.forceRefresh = true
        let result = try await app(http).acquireTokenSilently(request, correlationId: "c")
        #expect(result.accessToken == "forced")
        #expect(!result.fromCache)
    }

    @Test func reportsInteractionRequiredForARevokedRefreshToken() async throws {
        try seed(expiresIn: 10)
        let http = transport { _ in
            HTTPResponse(
                status: 400,
                body: Array(
                    #"{"error":"invalid_grant","error_description":"AADSTS700082: The refresh token has expired","error_codes":[700082],"suberror":"bad_token"}"#
                        .utf8))
        }
        do {
            _ = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "corr")
            Issue.record("expected interactionRequired")
        } catch let error as AuthError {
            #expect(error.kind == .interactionRequired)
            #expect(error.oauthError == "invalid_grant")
            #expect(error.errorCodes == [700082])
            #expect(error.suberror == "bad_token")
            #expect(error.correlationId == "corr")
        }
    }

    @Test func reportsInteractionRequiredWithoutAnAccount() async throws {
        let http = transport { _ in Tokens.tokenResponse(accessToken: "x") }
        await #expect(throws: AuthError.self) { _ = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c") }
        var request = SilentRequest()
        request.account = .username("nobody@contoso.com")
        do {
            _ = try await app(http).acquireTokenSilently(request, correlationId: "c")
        } catch let error as AuthError {
            #expect(error.kind == .accountNotFound)
        }
    }

    @Test func triesA503ThreeTimesThenReportsServerError() async throws {
        try seed(expiresIn: 10)
        let http = transport { _ in HTTPResponse(status: 503, headers: [("Retry-After", "0")], body: Array("busy".utf8)) }
        do {
            _ = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c")
            Issue.record("expected serverError")
        } catch let error as AuthError {
            #expect(error.kind == .serverError)
            #expect(error.httpStatus == 503)
            #expect(http.requests(to: "/token").count == 3)
            #expect(clock.sleeps == [.seconds(1), .seconds(2)])
        }
    }

    /// One rule for transient failures (TransientRetry.Budget.oneShot): a refresh rides out a
    /// 429 (its Retry-After honoured) and a reset, as device code polling does.
    @Test(arguments: [
        (HTTPResponse(status: 429, headers: [("Retry-After", "7")], body: Array(#"{"error":"throttled"}"#.utf8)), Duration.seconds(7)),
        (HTTPResponse(status: 502), Duration.seconds(1)),
    ])
    func aRefreshRidesOutOneTransientAnswer(first: HTTPResponse, wait: Duration) async throws {
        try seed(expiresIn: 10)
        let http = transport { n in n == 1 ? first : Tokens.tokenResponse(accessToken: "fresh") }
        let result = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(result.accessToken == "fresh")
        #expect(http.requests(to: "/token").count == 2)
        #expect(clock.sleeps == [wait])
    }

    @Test func aRefreshRidesOutAConnectionReset() async throws {
        try seed(expiresIn: 10)
        let tries = Mutex(0)
        let http = FakeHTTPTransport { request throws(HTTPError) in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            let n = tries.withLock {
                $0 += 1
                return $0
            }
            if n == 1 { throw .network("Connection reset by peer") }
            return Tokens.tokenResponse(accessToken: "fresh")
        }
        #expect(try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c").accessToken == "fresh")
        #expect(tries.withLock { $0 } == 2)
    }

    @Test func aLongRetryAfterOrATimeOutIsNotWaitedFor() async throws {
        try seed(expiresIn: 10)
        let throttled = transport { _ in HTTPResponse(status: 429, headers: [("Retry-After", "60")]) }
        let error = await #expect(throws: AuthError.self) { _ = try await app(throttled).acquireTokenSilently(SilentRequest(), correlationId: "c") }
        #expect(error?.httpStatus == 429 && error?.retryAfter == 60)
        #expect(throttled.requests(to: "/token").count == 1)
        let slow = FakeHTTPTransport { request throws(HTTPError) in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            throw .timedOut
        }
        let timeout = await #expect(throws: AuthError.self) { _ = try await app(slow).acquireTokenSilently(SilentRequest(), correlationId: "c") }
        #expect(timeout?.kind == .timeout)
        #expect(slow.requests(to: "/token").count == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test func mapsTransportFailures() async throws {
        try seed(expiresIn: 10)
        let http = FakeHTTPTransport { request throws(HTTPError) in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            throw .network("connection refused")
        }
        do {
            _ = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c")
        } catch let error as AuthError {
            #expect(error.kind == .networkError)
        }
    }

    @Test func signOutRemovesTheAccountAndClearsTheCurrentOne() async throws {
        try seed()
        let http = transport { _ in Tokens.tokenResponse(accessToken: "x") }
        let application = try app(http)
        #expect(try await application.currentAccount().current?.username == "alice@contoso.com")
        let removed = try await application.signOut(nil, fromBrowser: false)
        #expect(removed.account.homeAccountId == "oid-1.tid-1")
        #expect(removed.browserSignOut == nil)
        let after = try await application.currentAccount()
        #expect(after.current == nil)
        #expect(after.previous?.homeAccountId == "oid-1.tid-1")
        #expect(try await application.accounts().isEmpty)
        #expect(try await application.currentAccount().previous == nil)  // reported once
    }

    @Test func anotherProcessLearnsOfTheSignOutOnce() async throws {
        try seed()
        let http = transport { _ in Tokens.tokenResponse(accessToken: "x") }
        _ = try await app(http).signOut(nil, fromBrowser: false)
        let fresh = try app(http)  // a process that never saw the account
        let first = try await fresh.currentAccount()
        #expect(first.current == nil)
        #expect(first.previous?.username == "alice@contoso.com")
        #expect(try await fresh.currentAccount().previous == nil)
    }
}
