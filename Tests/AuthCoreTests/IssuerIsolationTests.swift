import AuthTestSupport
import JSON
import Logging
import Testing
import TokenCache

@testable import AuthCore

/// The issuer rule: a token is used for, and a refresh token sent to, only the issuer that
/// issued it.
@Suite struct IssuerIsolationTests {
    let clock = ManualClock()

    func app(
        _ authority: String, kind: Authority.Kind? = nil, known: [String] = [], cache: TokenCache,
        transport: FakeHTTPTransport
    ) throws -> PublicClientApplication {
        let configuration = ClientConfiguration(
            clientId: "client", authority: try Authority(authority, declared: kind),
            knownAuthorities: known)
        return PublicClientApplication(
            configuration: configuration,
            dependencies: AuthDependencies(
                transport: transport, cache: cache, clock: clock, browser: UnusedBrowser(), listener: UnusedListener(),
                logger: Logger(label: "test")))
    }

    func silent(_ authority: String?, force: Bool = false) -> SilentRequest {
        var request = SilentRequest()
        request.authority = authority
        request.forceRefresh = force
        return request
    }

    /// Answers discovery; any other request is a token request and fails the test's expectations.
    static func service() -> FakeHTTPTransport {
        FakeHTTPTransport { request in
            Tokens.discoveryAnswer(for: request) ?? Tokens.tokenResponse(accessToken: "must-not-be-asked")
        }
    }

    func seed(_ cache: TokenCache, environment: String, realm: String) throws {
        try cache.save(
            TokenResponseRecord(
                clientId: "client", environment: environment, realm: realm, homeAccountId: "sub-1.realms",
                localAccountId: "sub-1", username: "alice@idp.example", scopes: ["User.Read"], accessToken: "at-of-a",
                cachedAt: clock.now(), expiresOn: clock.now() + 3600, refreshToken: "rt-of-a"))
    }

    @Test func aGenericIssuerIsKeyedByItsWholeURL() throws {
        #expect(try Authority("https://idp.example/realms/a", declared: .oidc).cacheEnvironment == "idp.example/realms/a")
        // Only scheme and host are lower-cased: the path is the issuer's, case-sensitive.
        #expect(try Authority("http://127.0.0.1:8080/api/B", declared: .oidc).cacheEnvironment == "127.0.0.1:8080/api/B")
        #expect(try Authority("HTTPS://IdP.Example/Realms/Team/", declared: .oidc).cacheEnvironment == "idp.example/Realms/Team")
        #expect(try Authority("https://idp.example:443/realms/a", declared: .oidc).cacheEnvironment == "idp.example/realms/a")
        #expect(try Authority("https://idp.example/realms/A", declared: .oidc).key == "https://idp.example/realms/A")
    }

    @Test func aMicrosoftAuthorityIsKeyedByItsOrigin() throws {
        // The default port keeps MSAL's key (the host), shared with every MSAL.
        #expect(try Authority("https://login.microsoftonline.com/common").cacheEnvironment == "login.microsoftonline.com")
        #expect(try Authority("https://Login.Microsoftonline.com:443/common").cacheEnvironment == "login.microsoftonline.com")
        // Any other port, or http, names its port: two ports never share a token.
        #expect(try Authority("https://127.0.0.1:8443/common").cacheEnvironment == "127.0.0.1:8443")
        #expect(try Authority("http://localhost/common").cacheEnvironment == "localhost:80")
        #expect(try Authority("https://[::1]:8443/common").cacheEnvironment == "[::1]:8443")
        #expect(try Authority("https://login.microsoftonline.com/common").sharesHostAliases)
        #expect(try !Authority("https://login.microsoftonline.com:8443/common").sharesHostAliases)
        #expect(try !Authority("https://127.0.0.1/common").sharesHostAliases)
    }

    @Test func anotherPortHasNoAliases() async throws {
        let resolver = AuthorityResolver(transport: Self.service(), trust: AuthorityTrust(knownAuthorities: ["127.0.0.1"]))
        #expect(resolver.environments(of: try Authority("https://127.0.0.1:8443/common")) == ["127.0.0.1:8443"])
        #expect(resolver.environments(of: try Authority("https://login.microsoftonline.com:8443/common")) == ["login.microsoftonline.com:8443"])
        #expect(resolver.environments(of: try Authority("https://login.microsoftonline.com/common")).contains("login.windows.net"))
        #expect(resolver.aliases(of: "login.microsoftonline.com:8443") == ["login.microsoftonline.com:8443"])
        #expect(resolver.aliases(of: "idp.example/realms/Team") == ["idp.example/realms/Team"])
        // A discovery answer's names with another port, or loopback names, are never aliases.
        let metadata = try JSONValue.parse(#"[{"aliases":["login.example","login.example:8443","127.0.0.1","alias.example:443"]}]"#)
        #expect(AuthorityResolver.aliases(of: "login.example", in: metadata.arrayValue ?? []) == ["login.example", "alias.example"])
    }

    @Test func loopbackAndOtherPortsAreTrustedOnlyAsConfigured() throws {
        let configured = try Authority("https://127.0.0.1:8443/common")
        let trust = AuthorityTrust(knownAuthorities: ["127.0.0.1", "https://localhost:9444"], configured: configured)
        #expect(try trust.decide(configured) == .trusted)  // listed host "127.0.0.1"
        #expect(throws: AuthError.self) { try trust.decide(try Authority("https://127.0.0.1:9443/common")) }
        #expect(throws: AuthError.self) { try trust.decide(try Authority("http://127.0.0.1:8080/common")) }
        #expect(throws: AuthError.self) { try trust.decide(try Authority("https://login.microsoftonline.com:8443/common")) }
        #expect(throws: AuthError.self) { try trust.decide(try Authority("http://127.0.0.1:8080/x", declared: .oidc)) }
        #expect(try trust.decide(try Authority("https://localhost:9444/common")) == .trusted)
        #expect(try trust.decide(try Authority("https://127.0.0.1:8443/contoso.com")) == .trusted)  // another tenant, same origin
        let error = try? #require(throws: AuthError.self) { try trust.decide(try Authority("https://127.0.0.1:1/common")) }
        #expect(error?.kind == .authorityNotTrusted)
        #expect(error?.message.contains("knownAuthorities") == true)
    }

    @Test(arguments: [
        ("https://idp.example/realms/b", nil as String?),  // configured issuer B, A's tokens in the cache
        ("https://idp.example/realms/a", "https://idp.example/realms/b"),  // configured A, a request for B
    ])
    func twoIssuersOnOneHostNeverShareTokens(configured: String, requested: String?) async throws {
        let cache = TokenCache(store: MemoryTokenCacheStore())
        try seed(
            cache, environment: try Authority("https://idp.example/realms/a", declared: .oidc).cacheEnvironment,
            realm: "realms")
        let http = Self.service()
        let application = try app(configured, kind: .oidc, cache: cache, transport: http)
        for request in [silent(requested), silent(requested, force: true)] {
            let error = await #expect(throws: AuthError.self) {
                _ = try await application.acquireTokenSilently(request, correlationId: "c")
            }
            #expect(error?.kind == .interactionRequired)
        }
        #expect(
            http.requests.filter { !$0.url.hasSuffix("openid-configuration") }.isEmpty,
            "nothing but discovery was asked: \(http.requests.map(\.url))")
        // Issuer A still gets its own token.
        let own = try await app("https://idp.example/realms/a", kind: .oidc, cache: cache, transport: http)
            .acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(own.accessToken == "at-of-a")
    }

    @Test(arguments: [
        ("https://127.0.0.1:9443/common", "https://127.0.0.1:8443/common"),  // another port, same host
        ("https://idp.example/realms/Team", "https://idp.example/realms/team"),  // a path differing in case
    ])
    func anotherOriginOrIssuerIsNeverServedTheTokens(configured: String, signedIn: String) async throws {
        let cache = TokenCache(store: MemoryTokenCacheStore())
        let kind: Authority.Kind? = configured.contains("realms") ? .oidc : nil
        try seed(cache, environment: try Authority(signedIn, declared: kind).cacheEnvironment, realm: "common")
        let http = Self.service()
        let application = try app(configured, kind: kind, known: ["127.0.0.1"], cache: cache, transport: http)
        for request in [silent(nil), silent(nil, force: true)] {
            let error = await #expect(throws: AuthError.self) {
                _ = try await application.acquireTokenSilently(request, correlationId: "c")
            }
            #expect(error?.kind == .interactionRequired)
        }
        #expect(try await application.accounts().isEmpty)
        #expect(http.requests.filter { !$0.url.hasSuffix("openid-configuration") }.isEmpty, "\(http.requests.map(\.url))")
        // The origin that signed in still gets its own token.
        let own = try await app(signedIn, kind: kind, known: ["127.0.0.1"], cache: cache, transport: http)
            .acquireTokenSilently(SilentRequest(), correlationId: "c")
        #expect(own.accessToken == "at-of-a")
    }

    @Test func aRequestForAnotherLocalPortIsRefusedBeforeAnyRequest() async throws {
        let cache = TokenCache(store: MemoryTokenCacheStore())
        try seed(cache, environment: "127.0.0.1:8443", realm: "common")
        let http = Self.service()
        let application = try app("https://127.0.0.1:8443/common", known: ["127.0.0.1"], cache: cache, transport: http)
        for other in ["https://127.0.0.1:9443/common", "http://127.0.0.1:9080/common", "http://127.0.0.1:8443/common"] {
            let error = await #expect(throws: AuthError.self) {
                _ = try await application.acquireTokenSilently(silent(other, force: true), correlationId: "c")
            }
            #expect(error?.kind == .authorityNotTrusted)
        }
        #expect(http.requests.isEmpty, "\(http.requests.map(\.url))")
    }
}
