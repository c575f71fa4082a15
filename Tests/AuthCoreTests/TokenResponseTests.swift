import AuthSeams
import AuthTestSupport
import JSON
import Logging
import Synchronization
import Testing
import TokenCache

@testable import AuthCore

/// Token responses are validated before anything reaches the cache; a refresh answered
/// without an ID token or with `bearer` still gives MSAL's result.
@Suite struct TokenResponseTests {
    let clock = ManualClock()
    let cache = TokenCache(store: MemoryTokenCacheStore())

    private func parse(_ text: String) throws(AuthError) -> TokenResponse {
        guard let json = try? JSONValue.parse(Array(text.utf8)) else { fatalError("test JSON: \(text)") }
        return try TokenResponse(json: json)
    }

    @Test(arguments: [
        #"{"token_type":"Bearer","expires_in":3600}"#,  // no access_token
        #"{"access_token":"","expires_in":3600}"#,
        #"{"access_token":42,"expires_in":3600}"#,
        #"{"access_token":"at","expires_in":"soon"}"#,
        #"{"access_token":"at","expires_in":-5}"#,
        #"{"access_token":"at","expires_in":true}"#,
        #"{"access_token":"at","token_type":7}"#,
        #"{"access_token":"at","token_type":"pop"}"#,
        #"{"access_token":"at","token_type":"mac"}"#,
        #"{"access_token":"at","scope":["User.Read"]}"#,
        #"{"access_token":"at","refresh_token":{"v":1}}"#,
        #"{"access_token":"at","id_token":12}"#,
        #"{"access_token":"at","client_info":false}"#,
    ])
    func refusesAMalformedResponse(_ body: String) {
        let error = #expect(throws: AuthError.self) { try parse(body) }
        #expect(error?.kind == .malformedResponse)
        #expect(error?.message.contains("token response") == true)
    }

    @Test func refusesTokensLargerThanTheLimit() throws {
        let big = String(repeating: "a", count: TokenResponse.maxTokenBytes + 1)
        for member in ["access_token", "refresh_token", "id_token"] {
            let body = member == "access_token" ? #"{"access_token":"\#(big)"}"# : #"{"access_token":"at","\#(member)":"\#(big)"}"#
            let error = #expect(throws: AuthError.self) { try parse(body) }
            #expect(error?.kind == .malformedResponse)
            #expect(error?.message.contains(member) == true && error?.message.contains("65536") == true)
            #expect(error?.message.contains("aaaa") == false, "never the token itself")
        }
        let limit = String(repeating: "a", count: TokenResponse.maxTokenBytes)
        #expect(try parse(#"{"access_token":"\#(limit)"}"#).accessToken.count == TokenResponse.maxTokenBytes)
    }

    @Test func defaultsClampsAndNormalises() throws {
        let absent = try parse(#"{"access_token":"at","token_type":"bearer","refresh_token":""}"#)
        #expect(absent.expiresIn == TokenResponse.defaultLifetime)
        #expect(absent.tokenType == "Bearer")
        #expect(absent.refreshToken == nil)
        #expect(try parse(#"{"access_token":"at","expires_in":"1800"}"#).expiresIn == 1800)
        #expect(try parse(#"{"access_token":"at","expires_in":null}"#).expiresIn == TokenResponse.defaultLifetime)
        let absurd = try parse(#"{"access_token":"at","expires_in":1e300,"ext_expires_in":99999999999,"refresh_in":-3}"#)
        #expect(absurd.expiresIn == TokenResponse.maxLifetime)
        #expect(absurd.extExpiresIn == TokenResponse.maxLifetime)
        #expect(absurd.refreshIn == nil)
        #expect(try parse(#"{"access_token":"at","expires_in":60,"refresh_in":600}"#).refreshIn == nil)
        #expect(try parse(#"{"access_token":"at","token_type":"BEARER"}"#).tokenType == "Bearer")
    }

    // MARK: - Through the silent flow

    private func app(_ transport: FakeHTTPTransport) throws -> PublicClientApplication {
        let configuration = ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common"))
        let dependencies = AuthDependencies(
            transport: transport, cache: cache, clock: clock, browser: UnusedBrowser(),
            listener: UnusedListener(), logger: Logger(label: "test"))
        return PublicClientApplication(configuration: configuration, dependencies: dependencies)
    }

    private func transport(_ token: @escaping @Sendable () -> HTTPResponse) -> FakeHTTPTransport {
        FakeHTTPTransport { request in Tokens.discoveryAnswer(for: request) ?? token() }
    }

    static let idToken = Tokens.jwt(#"{"oid":"oid-1","tid":"tid-1","preferred_username":"alice@contoso.com"}"#)

    private func seed(expiresIn: Int64 = 10) throws {
        try cache.save(
            TokenResponseRecord(
                clientId: "client", environment: "login.microsoftonline.com", realm: "common", homeAccountId: "oid-1.tid-1",
                localAccountId: "oid-1", username: "alice@contoso.com", scopes: ["User.Read"], accessToken: "at-cached",
                cachedAt: clock.now(), expiresOn: clock.now() + expiresIn, refreshToken: "rt-0", idToken: Self.idToken))
    }

    private static func answer(_ body: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, body: Array(body.utf8))
    }

    @Test func aRefusedResponseLeavesTheCacheUnchanged() async throws {
        try seed(expiresIn: -10)
        // A first refusal keeps the discovery answers in the cache (kept a day); tokens untouched.
        let priming = transport { Self.answer(#"{"error":"invalid_scope"}"#, status: 400) }
        _ = try? await app(priming).acquireTokenSilently(SilentRequest(), correlationId: "c")
        let before = try cache.snapshot().serialized()
        let huge = String(repeating: "x", count: TokenResponse.maxTokenBytes + 1)  // 20 MB: the e2e test
        for body in [
            #"{"access_token":"\#(huge)","token_type":"Bearer","expires_in":3600}"#,
            #"{"access_token":"at-new","expires_in":"an hour"}"#,
            #"{"token_type":"Bearer","expires_in":3600,"refresh_token":"rt-new"}"#,
        ] {
            let http = transport { Self.answer(body) }
            let error = await #expect(throws: AuthError.self) {
                _ = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c")
            }
            #expect(error?.kind == .malformedResponse)
            #expect(try cache.snapshot().serialized() == before)
        }
    }

    @Test func anEmpty400OnRefreshIsInteractionRequired() async throws {
        try seed()
        for (status, body) in [(400, ""), (400, "<html>Bad Request</html>"), (401, #"{"error":"invalid_grant"}"#)] {
            let http = transport { Self.answer(body, status: status) }
            let error = await #expect(throws: AuthError.self) {
                _ = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "corr")
            }
            #expect(error?.kind == .interactionRequired, "HTTP \(status) \(body)")
            #expect(error?.httpStatus == status && error?.correlationId == "corr")
        }
        let http = transport { Self.answer("", status: 403) }  // not a refusal of the grant
        let error = await #expect(throws: AuthError.self) { _ = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c") }
        #expect(error?.kind == .serverError)
    }

    @Test func anUnknownTenantIsAnInvalidAuthorityWithTheServicesWords() async throws {
        try seed()
        let description = "AADSTS90002: Tenant 'nowhere.example' not found. Check to make sure you have the correct tenant ID."
        let http = FakeHTTPTransport { request in
            if request.url.contains("/common/discovery/instance") { return Tokens.instanceDiscovery }
            if request.url.hasSuffix("openid-configuration") {
                return Self.answer(#"{"error":"invalid_tenant","error_description":"\#(description)","error_codes":[90002]}"#, status: 400)
            }
            return Tokens.tokenResponse(accessToken: "never")
        }
        let error = await #expect(throws: AuthError.self) { _ = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c") }
        #expect(error?.kind == .invalidAuthority)
        #expect(error?.oauthError == "invalid_tenant" && error?.errorCodes == [90002] && error?.httpStatus == 400)
        #expect(error?.message.contains(description) == true, "\(String(describing: error?.message))")
        #expect(error?.message.contains("https://login.microsoftonline.com/common") == true)
        #expect(http.requests(to: "/token").isEmpty)
    }

    @Test func aRefreshWithoutAnIDTokenKeepsTheCachedOneAndBearerIsNormalised() async throws {
        try seed()
        let http = transport { Self.answer(#"{"access_token":"at-new","token_type":"bearer","expires_in":3600,"scope":"User.Read"}"#) }
        let fresh = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(fresh.accessToken == "at-new" && !fresh.fromCache)
        #expect(fresh.tokenType == "Bearer")
        #expect(fresh.idToken == Self.idToken)
        let cached = try await app(http).acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(cached.fromCache && cached.accessToken == "at-new" && cached.tokenType == "Bearer")
        #expect(cached.idToken == Self.idToken)
    }
}
