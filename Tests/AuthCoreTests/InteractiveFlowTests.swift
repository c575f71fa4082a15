import AuthSeams
import AuthTestSupport
import Logging
import Testing
import TokenCache

@testable import AuthCore

/// The browser sign-in end to end in memory: a scripted browser and redirect listener, a fake
/// service, a manual clock. Nothing here opens a socket or waits in real time.
@Suite struct InteractiveFlowTests {
    let clock = ManualClock()
    let cache = TokenCache(store: MemoryTokenCacheStore())
    let listener = ScriptedRedirectListener(port: 50_123)

    /// The service: discovery, then tokens whose ID token echoes the nonce the browser saw.
    private func service(_ browser: ScriptedBrowser, token: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil })
        -> FakeHTTPTransport
    {
        FakeHTTPTransport { request in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            if let answer = token(request) { return answer }
            return Tokens.tokenResponse(accessToken: "at-1", nonce: browser.parameters(ofOpened: 0)["nonce"])
        }
    }

    private func app(
        _ transport: FakeHTTPTransport, _ browser: ScriptedBrowser,
        redirectURI: String = "http://localhost"
    ) throws -> PublicClientApplication {
        var configuration = ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common"))
        configuration.redirectURI = redirectURI
        return PublicClientApplication(
            configuration: configuration,
            dependencies: AuthDependencies(
                transport: transport, cache: cache, clock: clock, browser: browser, listener: listener, logger: Logger(label: "test")))
    }

    private func signIn(_ browser: ScriptedBrowser, transport: FakeHTTPTransport? = nil) async throws -> TokenResult {
        var request = InteractiveRequest()
        request.scopes = ["User.Read"]
        return try await app(transport ?? service(browser), browser).acquireTokenInteractively(request, correlationId: "corr-1")
    }

    private func failure(_ browser: ScriptedBrowser, transport: FakeHTTPTransport? = nil) async -> AuthError? {
        do {
            _ = try await signIn(browser, transport: transport)
            return nil
        } catch {
            return error as? AuthError
        }
    }

    @Test func signsInRedeemingTheCodeWithThePKCEVerifierAndTheSameRedirectURI() async throws {
        let browser = ScriptedBrowser(listener: listener, .complete(code: "code-1"))
        let transport = service(browser)
        let result = try await signIn(browser, transport: transport)
        #expect(result.accessToken == "at-1" && !result.fromCache)
        #expect(result.account.username == "alice@contoso.com")

        let authorize = browser.parameters(ofOpened: 0)
        #expect(authorize["redirect_uri"] == "http://localhost:50123")
        #expect(authorize["code_challenge_method"] == "S256" && authorize["response_type"] == "code")
        #expect(authorize["scope"]?.split(separator: " ").contains("offline_access") == true)
        let redeem = FakeHTTPTransport.fields(try #require(transport.requests(to: "/token").first))
        #expect(redeem["code"] == "code-1" && redeem["grant_type"] == "authorization_code")
        #expect(redeem["redirect_uri"] == authorize["redirect_uri"])
        let verifier = try #require(redeem["code_verifier"])
        #expect(PKCE(verifier: verifier).challenge == authorize["code_challenge"])
        #expect(listener.started.last?.isClosed == true)

        // Saved: the next silent request is served from the cache, without a request.
        var silent = SilentRequest()
        silent.scopes = ["User.Read"]
        let sent = transport.requests.count
        let again = try await app(transport, browser).acquireTokenSilently(silent, correlationId: "corr-2")
        #expect(again.fromCache && again.accessToken == "at-1")
        #expect(transport.requests.count == sent)
    }

    @Test func aForgedRedirectWithAnotherStateIsRefusedAndTheRealOneTaken() async throws {
        let browser = ScriptedBrowser(listener: listener, .forgedStateFirst(code: "code-2"))
        let transport = service(browser)
        _ = try await signIn(browser, transport: transport)
        #expect(listener.started.last?.refused == 1)
        #expect(FakeHTTPTransport.fields(try #require(transport.requests(to: "/token").first))["code"] == "code-2")
    }

    @Test(arguments: [
        (ScriptedBrowser.Action.fail(error: "access_denied", subcode: "cancel"), AuthError.Kind.userCanceled),
        (.fail(error: "access_denied", description: "AADSTS65004: declined"), .userCanceled),
        (.fail(error: "access_denied", description: "AADSTS50129: register the device"), .workplaceJoinRequired),
        (.fail(error: "access_denied", description: "AADB2C90118: forgot password"), .passwordResetRequired),
        (.fail(error: "invalid_scope", description: "AADSTS70011: bad scope"), .invalidConfiguration),
        (.fail(error: "login_required"), .interactionRequired),
        (.fail(error: "server_error"), .serverError),
        (.abandon, .timeout),
        (.unavailable, .browserUnavailable),
    ])
    func redirectFailuresBecomeTheirKindWithoutARedemption(action: ScriptedBrowser.Action, kind: AuthError.Kind) async throws {
        let browser = ScriptedBrowser(listener: listener, action)
        let transport = service(browser)
        let error = try #require(await failure(browser, transport: transport))
        #expect(error.kind == kind, "\(error)")
        #expect(transport.requests(to: "/token").isEmpty)
        #expect(listener.started.last?.isClosed == true)
        #expect(try cache.read { $0.accountList() }.isEmpty)
    }

    @Test func aTokenEndpointErrorIsClassifiedLikeTheRedirectsAndNothingIsCached() async throws {
        let browser = ScriptedBrowser(listener: listener, .complete(code: "code-3"))
        let transport = service(browser) { request in
            guard request.url.hasSuffix("/token") else { return nil }
            return HTTPResponse(status: 400, body: Array(#"{"error":"invalid_grant","error_codes":[50129]}"#.utf8))
        }
        let error = try #require(await failure(browser, transport: transport))
        #expect(error.kind == .workplaceJoinRequired && error.correlationId == "corr-1")
        #expect(try cache.read { $0.accountList() }.isEmpty)
    }

    @Test func aRedirectURIWithAPortAndPathIsKept() async throws {
        let browser = ScriptedBrowser(listener: listener, .complete(code: "code-4"))
        var request = InteractiveRequest()
        request.scopes = ["User.Read"]
        _ = try await app(service(browser), browser, redirectURI: "http://127.0.0.1:8400/auth/done")
            .acquireTokenInteractively(request, correlationId: "c")
        #expect(browser.parameters(ofOpened: 0)["redirect_uri"] == "http://127.0.0.1:8400/auth/done")
    }

    @Test func aRedirectURIOutsideTheListenersRuleIsInvalidConfiguration() async throws {
        let browser = ScriptedBrowser(listener: listener, .complete(code: "code-5"))
        var request = InteractiveRequest()
        request.scopes = ["User.Read"]
        await #expect(throws: AuthError.self) {
            _ = try await app(service(browser), browser, redirectURI: "http://[::1]").acquireTokenInteractively(request, correlationId: "c")
        }
        #expect(browser.openedURLs.isEmpty)
    }
}
