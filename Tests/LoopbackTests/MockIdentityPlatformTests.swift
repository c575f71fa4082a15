import AuthSeams
import Testing

@testable import Loopback

#if canImport(Glibc)
    import Glibc
#endif

/// End to end with the project's mock identity platform (mock) and its scripted
/// browser as `$BROWSER`: the real authorize endpoint redirects (query or form_post) to our
/// listener through a real process started by SystemBrowserLauncher.
@Suite(
    "Loopback + SystemBrowserLauncher against the mock identity platform",
    .enabled(if: MockIdentityPlatform.available), .serialized)
struct MockIdentityPlatformTests {
    @Test("query, form_post and a cancelled sign-in")
    func signIns() async throws {
        let mock = try await MockIdentityPlatform.start()
        defer { mock.stop() }
        let complete = try await signIn(mock, responseMode: "query")
        #expect(complete.code?.isEmpty == false && complete.clientInfo?.isEmpty == false && complete.error == nil)
        let posted = try await signIn(mock, responseMode: "form_post")
        #expect(posted.code?.isEmpty == false && posted.state == "state-123")
        let denied = try await signIn(mock, responseMode: "query", action: "deny")
        #expect(denied.error == "access_denied" && denied.errorSubcode == "cancel" && denied.code == nil)
    }

    func signIn(_ mock: MockIdentityPlatform, responseMode: String, action: String = "complete") async throws -> AuthorizationResponse {
        let pending = try await LoopbackRedirectListener().start(redirectURI: "http://localhost")
        let url =
            mock.url + "/organizations/oauth2/v2.0/authorize?client_id=00001111-aaaa-2222-bbbb-3333cccc4444"
            + "&response_type=code&response_mode=\(responseMode)&scope=openid%20offline_access%20User.Read"
            + "&redirect_uri="
            + pending.redirectURI.replacingOccurrences(of: ":", with: "%3A")
            .replacingOccurrences(of: "/", with: "%2F")
            + "&state=state-123&client_info=1&code_challenge_method=S256"
            + "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        let browser = "env SCRIPTED_BROWSER_CA=\(mock.caFile) SCRIPTED_BROWSER_ACTION=\(action) python3 \(MockIdentityPlatform.scriptedBrowser)"
        try await SystemBrowserLauncher(browser: browser, fallbackCommands: []).open(url)
        return try await pending.response(expectedState: "state-123", timeout: .seconds(20))
    }
}

/// Starts and stops mock/run-mock-idp.
struct MockIdentityPlatform {
    static let directory: String = {
        let file = #filePath  // …/Tests/LoopbackTests/MockIdentityPlatformTests.swift
        let repository = file.split(separator: "/").dropLast(3).joined(separator: "/")
        return "/" + repository + "/mock"
    }()
    static var scriptedBrowser: String { directory + "/scripted_browser.py" }
    static var available: Bool {
        access(directory + "/run-mock-idp", X_OK) == 0 && access("/usr/bin/python3", X_OK) == 0
    }

    let url: String
    let caFile: String
    let pid: pid_t

    static func start() async throws -> MockIdentityPlatform {
        let stateDirectory = TestFiles.makeDirectory()
        let pid = try ProcessSpawner.spawn([directory + "/run-mock-idp", "--port", "0", "--state-dir", stateDirectory])
        guard let ready = await TestFiles.waitForFile(stateDirectory + "/ready.json", timeout: .seconds(20)),
            let url = value(of: "url", in: ready), let caFile = value(of: "caFile", in: ready)
        else {
            kill(pid, SIGTERM)
            ProcessSpawner.reapInBackground(pid)
            throw BrowserError.unavailable("mock identity platform did not start")
        }
        return MockIdentityPlatform(url: url, caFile: caFile, pid: pid)
    }

    func stop() {
        kill(pid, SIGTERM)
        ProcessSpawner.reapInBackground(pid)
    }

    /// The string value of `"key": "value"` in a flat JSON object.
    private static func value(of key: String, in json: String) -> String? {
        guard let keyRange = json.firstRange(of: "\"\(key)\"") else { return nil }
        let rest = json[keyRange.upperBound...].drop { $0 == " " || $0 == ":" }
        guard rest.first == "\"" else { return nil }
        return String(rest.dropFirst().prefix { $0 != "\"" })
    }
}
