import AuthSeams
import AuthTestSupport
import Testing

@testable import AuthCore

/// The look at the sign-in page before the browser opens: it fails the sign-in only on an
/// error page naming a configuration mistake, or when the service is out of reach.
@Suite struct AuthorizePreflightTests {
    private let page = """
        <html><body><h1>Sorry, but we're having trouble signing you in.</h1><p id='error'>AADSTS700016: \
        Application with identifier &#39;9999&#39; was not found in the directory &#39;contoso&#39;.</p>\
        <pre>unauthorized_client</pre></body></html>
        """

    @Test func namesTheServicesSentenceForAnUnknownApplication() {
        #expect(
            AuthorizePreflight.fatalSentence(in: page)
                == "AADSTS700016: Application with identifier '9999' was not found in the directory 'contoso'.")
    }

    @Test func keepsTheFirstSentenceOnlySoTheFixFitsOneLine() {
        let long =
            "<p>AADSTS700016: Application with identifier 'x' was not found. This can happen if the "
            + String(repeating: "application has not been installed ", count: 10) + "</p>"
        #expect(AuthorizePreflight.fatalSentence(in: long) == "AADSTS700016: Application with identifier 'x' was not found.")
        let endless = "<p>AADSTS700016: " + String(repeating: "x", count: 500) + "</p>"
        #expect(AuthorizePreflight.fatalSentence(in: endless)?.count == 200)
    }

    @Test func otherPagesAndCodesGoOnToTheBrowser() {
        #expect(AuthorizePreflight.fatalSentence(in: "<html><form>Sign in</form></html>") == nil)
        #expect(AuthorizePreflight.fatalSentence(in: "<p>AADSTS50058: A silent sign-in request was sent</p>") == nil)
        // A code that only starts like a fatal one is another code.
        #expect(AuthorizePreflight.fatalSentence(in: "<p>AADSTS7000161: something else</p>") == nil)
    }

    @Test func refusesAtOnceAndAsksForNoScopeOrState() async throws {
        let transport = FakeHTTPTransport { _ in HTTPResponse(status: 400, body: Array(page.utf8)) }
        let preflight = AuthorizePreflight(transport: transport)
        await #expect(throws: AuthError.self) {
            try await preflight.check(
                authorizationEndpoint: "https://login.example/common/oauth2/v2.0/authorize", clientId: "9999",
                redirectURI: "http://localhost")
        }
        let sent = try #require(transport.requests.first)
        #expect(sent.method == "GET" && sent.body == nil)
        #expect(sent.url.contains("client_id=9999") && !sent.url.contains("scope=") && !sent.url.contains("state="))
    }

    @Test func aRedirectBackOrASignInPagePasses() async throws {
        for response in [
            HTTPResponse(status: 302, headers: [("Location", "http://localhost?error=invalid_request")]),
            HTTPResponse(status: 200, body: Array("<html>Sign in</html>".utf8)),
        ] {
            try await AuthorizePreflight(transport: FakeHTTPTransport { _ in response }).check(
                authorizationEndpoint: "https://login.example/authorize", clientId: "c", redirectURI: "http://localhost")
        }
    }
}
