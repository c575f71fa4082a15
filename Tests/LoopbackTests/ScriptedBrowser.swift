import AuthSeams
import Synchronization
import Testing

@testable import Loopback

/// A `BrowserLauncher` test double: reads `redirect_uri`, `state` and `response_mode`
/// from the authorize URL and delivers a scripted answer to the listener itself, in the
/// background (like a real browser, it does not wait for the app).
final class ScriptedBrowser: BrowserLauncher {
    enum Script: Sendable {
        /// Answer with a code.
        case complete(code: String)
        /// The user cancelled: `error=access_denied&error_subcode=cancel`.
        case deny
        /// An attacker's request with a wrong state first, then the real answer.
        case forgedFirst(code: String)
    }

    let script: Script
    /// Status codes the listener answered, in order.
    let statuses = Mutex<[Int]>([])
    private let deliveries = Mutex<[Task<Void, Never>]>([])

    init(_ script: Script) { self.script = script }

    func open(_ url: String) async throws {
        let query = url.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        let parameters = try FormURLEncoding.decode(query)
        guard let redirectURI = parameters["redirect_uri"], let state = parameters["state"] else {
            throw BrowserError.unavailable("not an authorize URL")
        }
        let redirect = try RedirectURI(parsing: redirectURI)
        let port = redirect.port ?? 80
        let post = parameters["response_mode"] == "form_post"
        var answers: [String] = []
        switch script {
        case .complete(let code): answers = ["code=\(code)&state=\(state)"]
        case .deny: answers = ["error=access_denied&error_description=cancelled&error_subcode=cancel&state=\(state)"]
        case .forgedFirst(let code): answers = ["code=forged&state=guess", "code=\(code)&state=\(state)"]
        }
        let task = Task {
            for answer in answers {
                let reply =
                    post
                    ? try? await TestHTTPClient.send(
                        port: port, method: "POST", target: redirect.requestPath,
                        headers: ["Content-Type: application/x-www-form-urlencoded"], body: answer)
                    : try? await TestHTTPClient.send(port: port, target: redirect.requestPath + "?" + answer)
                statuses.withLock { $0.append(reply?.status ?? -1) }
            }
        }
        deliveries.withLock { $0.append(task) }
    }

    /// Waits for every delivery to finish.
    func settle() async {
        for task in deliveries.withLock({ $0 }) { await task.value }
    }
}

@Suite("Sign-in flow with a scripted browser")
struct ScriptedBrowserFlowTests {
    func signIn(_ browser: ScriptedBrowser, responseMode: String = "query") async throws -> AuthorizationResponse {
        let pending = try await LoopbackRedirectListener().start(redirectURI: "http://localhost/callback")
        let url =
            "https://login.example/common/oauth2/v2.0/authorize?client_id=c&response_mode=\(responseMode)"
            + "&redirect_uri=\(pending.redirectURI)&state=xyz"
        try await browser.open(url)
        let response = try await pending.response(expectedState: "xyz", timeout: .seconds(10))
        await browser.settle()
        return response
    }

    @Test("complete, query and form_post")
    func complete() async throws {
        #expect(try await signIn(ScriptedBrowser(.complete(code: "abc"))).code == "abc")
        #expect(try await signIn(ScriptedBrowser(.complete(code: "def")), responseMode: "form_post").code == "def")
    }

    @Test("the user cancels")
    func deny() async throws {
        let response = try await signIn(ScriptedBrowser(.deny))
        #expect(response.error == "access_denied" && response.errorSubcode == "cancel" && response.code == nil)
    }

    @Test("a forged redirect is refused, the real one still completes the sign-in")
    func forged() async throws {
        let browser = ScriptedBrowser(.forgedFirst(code: "real"))
        #expect(try await signIn(browser).code == "real")
        #expect(browser.statuses.withLock { $0 } == [400, 200])
    }
}
