import AuthSeams
import AuthTestSupport
import Logging
import Synchronization
import Testing
import TokenCache

@testable import AuthCore

/// A browser that records the URLs it is asked to open (or fails).
final class RecordingBrowser: BrowserLauncher {
    private let opened = Mutex<[String]>([])
    let fails: Bool
    init(fails: Bool = false) { self.fails = fails }
    var urls: [String] { opened.withLock { $0 } }
    func open(_ url: String) async throws {
        opened.withLock { $0.append(url) }
        if fails { throw BrowserError.unavailable("xdg-open: not found") }
    }
}

/// Sign-out from the browser as OIDC RP-Initiated Logout 1.0 says, and what became of it.
@Suite struct SignOutTests {
    let clock = ManualClock()
    let cache = TokenCache(store: MemoryTokenCacheStore())
    static let idToken = Tokens.jwt(#"{"oid":"oid-1","tid":"tid-1","preferred_username":"alice@contoso.com"}"#)

    private func app(_ transport: FakeHTTPTransport, postLogout: String? = nil) throws -> PublicClientApplication {
        var configuration = ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common"))
        configuration.postLogoutRedirectURI = postLogout
        let dependencies = AuthDependencies(
            transport: transport, cache: cache, clock: clock, browser: UnusedBrowser(),
            listener: UnusedListener(), logger: Logger(label: "test"))
        return PublicClientApplication(configuration: configuration, dependencies: dependencies)
    }

    private func seed() throws {
        try cache.save(
            TokenResponseRecord(
                clientId: "client", environment: "login.microsoftonline.com", realm: "tid-1", homeAccountId: "oid-1.tid-1",
                localAccountId: "oid-1", username: "alice@contoso.com", scopes: ["User.Read"], accessToken: "at",
                cachedAt: clock.now(), expiresOn: clock.now() + 3600, refreshToken: "rt", idToken: Self.idToken))
        try cache.setCurrentAccountId("oid-1.tid-1", clientId: "client")
    }

    private static func query(_ url: String) -> [String: String] {
        guard let mark = url.firstIndex(of: "?") else { return [:] }
        return (try? FormURLEncoding.decode(url[url.index(after: mark)...])) ?? [:]
    }

    @Test func sendsTheIDTokenHintClientIdAndPostLogoutRedirect() async throws {
        try seed()
        let browser = RecordingBrowser()
        let http = FakeHTTPTransport { request in Tokens.discoveryAnswer(for: request) ?? HTTPResponse(status: 404, body: []) }
        let out = try await app(http, postLogout: "https://app.example/signed-out").signOut(nil, fromBrowser: true, browser: browser)
        #expect(out.browserSignOut == .opened)
        #expect(browser.urls.count == 1)
        let url = try #require(browser.urls.first)
        #expect(url.hasPrefix("https://login.microsoftonline.com/common/oauth2/v2.0/logout?"))
        #expect(
            Self.query(url) == [
                "id_token_hint": Self.idToken, "client_id": "client",
                "post_logout_redirect_uri": "https://app.example/signed-out",
                "logout_hint": "alice@contoso.com",
            ])
        #expect(try cache.read { $0.accountList() }.isEmpty, "the tokens are gone")
    }

    // Each test has its own cache: the discovery answers are kept in it.

    @Test func reportsNotSupportedWithoutAnEndSessionEndpoint() async throws {
        try seed()
        let noEndSession = FakeHTTPTransport { request in
            if request.url.hasSuffix("openid-configuration") {
                return HTTPResponse(
                    status: 200,
                    body: Array(
                        """
                        {"authorization_endpoint":"https://login.microsoftonline.com/common/oauth2/v2.0/authorize",\
                        "token_endpoint":"https://login.microsoftonline.com/common/oauth2/v2.0/token"}
                        """.utf8))
            }
            return Tokens.discoveryAnswer(for: request) ?? HTTPResponse(status: 404, body: [])
        }
        let browser = RecordingBrowser()
        #expect(try await app(noEndSession).signOut(nil, fromBrowser: true, browser: browser).browserSignOut == .notSupported)
        #expect(browser.urls.isEmpty)
        #expect(try cache.read { $0.accountList() }.isEmpty)
    }

    @Test func reportsFailedWhenTheBrowserCannotOpen() async throws {
        try seed()
        let http = FakeHTTPTransport { request in Tokens.discoveryAnswer(for: request) ?? HTTPResponse(status: 404, body: []) }
        let failing = RecordingBrowser(fails: true)
        let out = try await app(http).signOut(nil, fromBrowser: true, browser: failing)
        #expect(out.browserSignOut == .failed)
        #expect(failing.urls.count == 1)
        #expect(failing.urls.first.map { !$0.contains("post_logout_redirect_uri") } == true, "not configured: not sent")
        #expect(try cache.read { $0.accountList() }.isEmpty)
    }

    @Test func reportsNothingWhenNoBrowserPartWasAskedFor() async throws {
        try seed()
        let http = FakeHTTPTransport { request in Tokens.discoveryAnswer(for: request) ?? HTTPResponse(status: 404, body: []) }
        let browser = RecordingBrowser()
        #expect(try await app(http).signOut(nil, fromBrowser: false, browser: browser).browserSignOut == nil)
        #expect(browser.urls.isEmpty)
    }
}
