import AuthSeams
import AuthTestSupport
import Logging
import Synchronization
import Testing
import TokenCache

@testable import AuthCore

/// The paste-back sign-in in memory: a user who answers the URL with a pasted text (made from
/// the URL's own parameters, or not), a fake service. Nothing listens, nothing waits in real time.
@Suite struct PasteBackFlowTests {
    let clock = ManualClock()
    let cache = TokenCache(store: MemoryTokenCacheStore())

    /// The user: shown the URL, pastes what `answer` makes of its parameters.
    final class User: PasteBackPrompt {
        let answer: @Sendable ([String: String]) -> String
        let shown = Mutex<[String]>([])
        init(_ answer: @escaping @Sendable ([String: String]) -> String) { self.answer = answer }

        func redirectedAddress(signInURL url: String) async throws -> String {
            shown.withLock { $0.append(url) }
            return answer(Self.parameters(of: url))
        }

        static func parameters(of url: String) -> [String: String] {
            (try? FormURLEncoding.decode(url.split(separator: "?", maxSplits: 1).last ?? "")) ?? [:]
        }
    }

    private func transport(nonce: @escaping @Sendable () -> String?) -> FakeHTTPTransport {
        FakeHTTPTransport { request in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            return Tokens.tokenResponse(accessToken: "at-paste", nonce: nonce())
        }
    }

    private func app(_ transport: FakeHTTPTransport) throws -> PublicClientApplication {
        let configuration = ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common"))
        return PublicClientApplication(
            configuration: configuration,
            dependencies: AuthDependencies(
                transport: transport, cache: cache, clock: clock, browser: ScriptedBrowser(listener: ScriptedRedirectListener(), .abandon),
                listener: ScriptedRedirectListener(), logger: Logger(label: "test")))
    }

    private func signIn(_ user: User, _ transport: FakeHTTPTransport) async throws -> TokenResult {
        var request = InteractiveRequest()
        request.scopes = ["User.Read"]
        return try await app(transport).acquireTokenByPastedAddress(request, prompt: user, correlationId: "corr-1")
    }

    @Test func thePastedAddressIsRedeemedWithTheVerifierThatNeverLeft() async throws {
        let user = User { "  http://localhost/?code=code-1&state=\($0["state"] ?? "")&session_state=s\n" }
        let transport = transport { user.shown.withLock { $0.first.map(User.parameters(of:))?["nonce"] } }
        let result = try await signIn(user, transport)
        #expect(result.accessToken == "at-paste" && result.account.username == "alice@contoso.com")
        let sent = User.parameters(of: try #require(user.shown.withLock { $0.first }))
        #expect(sent["redirect_uri"] == "http://localhost" && sent["code_challenge_method"] == "S256" && sent["nonce"] != nil)
        let redeem = FakeHTTPTransport.fields(try #require(transport.requests(to: "/token").first))
        #expect(redeem["code"] == "code-1" && redeem["redirect_uri"] == "http://localhost")
        let verifier = try #require(redeem["code_verifier"])
        #expect(PKCE(verifier: verifier).challenge == sent["code_challenge"])
        #expect(!(user.shown.withLock { $0.first } ?? "").contains(verifier))
    }

    @Test func anotherStateIsRefusedBeforeAnyRedemption() async throws {
        let user = User { "http://localhost/?code=code-1&state=\(String(($0["state"] ?? "").reversed()))x" }
        let transport = transport { nil }
        let error = await #expect(throws: AuthError.self) { _ = try await signIn(user, transport) }
        #expect(error?.kind == .pastedStateMismatch)
        #expect(transport.requests(to: "/token").isEmpty)
        #expect(try cache.read { $0.inventory(clientId: "client") }.accessTokens.isEmpty)
    }

    @Test func anErrorAddressIsTheServicesError() async throws {
        let user = User { "http://localhost/?error=access_denied&error_description=AADSTS65004%3A+declined&state=\($0["state"] ?? "")" }
        let transport = transport { nil }
        do {
            _ = try await signIn(user, transport)
            Issue.record("signed in with an error address")
        } catch let error as AuthError {
            #expect(error.kind == .userCanceled && error.oauthError == "access_denied")
        }
        #expect(transport.requests(to: "/token").isEmpty)
    }

    @Test func anIDTokenWithAnotherNonceIsACodeOfAnotherSignIn() async throws {
        let user = User { _ in "code-of-another-sign-in" }
        let transport = transport { "another-nonce" }
        do {
            _ = try await signIn(user, transport)
            Issue.record("signed in with another sign-in's code")
        } catch let error as AuthError {
            #expect(error.kind == .pastedCodeFromAnotherSignIn)
        }
        #expect(try cache.read { $0.inventory(clientId: "client") }.accessTokens.isEmpty)
    }

    @Test(arguments: [
        ("", AuthError.Kind.pastedAddressRefused),
        ("https://login.microsoftonline.com/common/oauth2/v2.0/authorize?code=x&state=S", .pastedAddressRefused),
        ("http://evil.example/?code=x&state=S", .pastedAddressRefused),
        ("http://localhost/other?code=x&state=S", .pastedAddressRefused),
        ("http://localhost/?code=x", .pastedAddressRefused),
        ("http://localhost/?state=S", .pastedAddressRefused),
        ("http://localhost/?code=x&code=y&state=S", .pastedAddressRefused),
        ("two words", .pastedAddressRefused),
        ("http://localhost/?code=x&state=T", .pastedStateMismatch),
        ("http://localhost/?error=access_denied&state=T", .pastedStateMismatch),
    ])
    func whatIsNotThisSignInsAddressIsRefused(pasted: String, kind: AuthError.Kind) {
        let error = #expect(throws: AuthError.self) { try PastedAddress.response(pasted, redirectURI: "http://localhost", expectedState: "S") }
        #expect(error?.kind == kind, "\(pasted)")
    }

    @Test func theAddressItsQueryOrTheBareCodeWillDo() throws {
        for pasted in [
            "http://localhost/?code=c%2B1&state=S", "\"http://127.0.0.1:8400/?code=c%2B1&state=S\"", "<http://localhost?code=c%2B1&state=S>",
            "?code=c%2B1&state=S", "code=c%2B1&state=S", "http://localhost/#code=c%2B1&state=S",
        ] {
            #expect(try PastedAddress.response(pasted, redirectURI: "http://localhost", expectedState: "S").code == "c+1", "\(pasted)")
        }
        let bare = try PastedAddress.response(" 0.AXoA-bc_d.e~f \n", redirectURI: "http://localhost", expectedState: "S")
        #expect(bare.code == "0.AXoA-bc_d.e~f" && bare.state == nil)
        let path = try PastedAddress.response("http://localhost/cb?code=c&state=S", redirectURI: "http://localhost:8400/cb", expectedState: "S")
        #expect(path.code == "c")
    }
}
