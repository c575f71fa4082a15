import JSON
import JSONRPC
import Sidecar
import Testing

@testable import SidecarCLI

#if canImport(Glibc)
    import Glibc
#endif

/// The verbs' pure parts: what they print, the exit statuses, the browser fallback.
@Suite struct VerbOutputTests {
    @Test func tenantAuthority() {
        #expect(
            VerbRequests.authority("https://login.microsoftonline.com/common", tenant: "contoso.com")
                == "https://login.microsoftonline.com/contoso.com")
        #expect(VerbRequests.authority("https://127.0.0.1:8443/organizations/v2.0?x=1", tenant: "t1") == "https://127.0.0.1:8443/t1")
        #expect(VerbRequests.authority("https://host", tenant: "t") == "https://host/t")
        #expect(VerbRequests.authority("not a url", tenant: "t") == nil)
        for tenant in ["aaaabbbb-0000-cccc-1111-dddd2222eeee", "contoso.onmicrosoft.com", "common", "organizations", "consumers", "t1"] {
            #expect(VerbRequests.tenantProblem(tenant, option: "--tenant") == nil, "\(tenant)")
        }
        for tenant in ["a/b", "", "a b", "a?", ".", "..", "%2e%2e", "a..b", "-a", "a-", ".a", "a.", "a_b", "a\\b", String(repeating: "a", count: 64)]
        {
            let problem = VerbRequests.tenantProblem(tenant, option: "--tenant")
            #expect(problem?.hasPrefix("--tenant: '") == true && problem?.contains("is not a tenant") == true, "\(tenant)")
        }
    }

    @Test func exitStatuses() {
        let noAccount = RPCError(code: -50002, message: "no account", name: "interactionRequired", data: ["suberror": "no_account"])
        #expect(VerbFailure.from(noAccount) == VerbFailure(status: 2, message: "no account is signed in; run 'auth-sidecar login'"))
        let expired = RPCError(code: -50002, message: "AADSTS700082: expired\r\nTrace ID: x", name: "interactionRequired")
        #expect(
            VerbFailure.from(expired, account: "a@b.c")
                == VerbFailure(status: 2, message: "sign-in needed: AADSTS700082: expired Trace ID: x; run 'auth-sidecar login --login-hint a@b.c'"))
        let unknown = RPCError(code: -51011, message: "no cached account", name: "accountNotFound")
        #expect(VerbFailure.from(unknown, account: "x@y").status == 2)
        let network = RPCError(code: -51001, message: "connection refused", name: "networkError")
        #expect(VerbFailure.from(network) == VerbFailure(status: 1, message: "connection refused (networkError)"))
        #expect(VerbFailure.from(.invalidParams("missing member 'clientId'", member: "clientId")).message.hasPrefix("no client id configured"))
        let placeholder = RPCError.invalidParams("clientId 'YOUR-CLIENT-ID' is a placeholder: set clientId to ...", member: "clientId")
        #expect(VerbFailure.from(placeholder).message.contains("clientId 'YOUR-CLIENT-ID' is a placeholder"))
        #expect(VerbFailure.oneLine(String(repeating: "x", count: 400)).count == 300)
    }

    static let authorizeURL =
        "https://127.0.0.1:9/organizations/oauth2/v2.0/authorize?client_id=c&redirect_uri=http%3A%2F%2Flocalhost%3A43123&state=s"

    @Test func redirectPort() {
        #expect(URLOpener.redirectPort(in: Self.authorizeURL) == 43123)
        #expect(URLOpener.redirectPort(in: "https://h/a?redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcb") == 5000)
        #expect(URLOpener.redirectPort(in: "https://h/logout?post_logout_redirect_uri=x") == nil)
        #expect(URLOpener.redirectPort(in: "https://h/authorize?redirect_uri=https%3A%2F%2Fexample.com") == nil)
    }

    final class Lines { var lines: [String] = [] }

    @Test func aPrintedURLComesWithTheForwardingLine() throws {
        let said = Lines()
        var launched = false
        let opener = URLOpener(
            method: .printedURL, sshHost: "alice@10.0.0.5",
            launch: { _, _ in
                launched = true
                return true
            }, say: { said.lines.append($0) })
        #expect(try opener.handle(["url": .string(Self.authorizeURL)]).get() == [:])
        #expect(!launched)
        #expect(said.lines.contains(Self.authorizeURL))
        #expect(said.lines.contains { $0.hasSuffix("ssh -L 43123:127.0.0.1:43123 alice@10.0.0.5") })
    }

    @Test func aFailedLauncherFallsBackToPrinting() throws {
        let said = Lines()
        let opener = URLOpener(method: .systemBrowser, launch: { _, _ in false }, say: { said.lines.append($0) })
        #expect(try opener.handle(["url": .string(Self.authorizeURL)]).get() == [:])
        #expect(said.lines.contains(Self.authorizeURL))
        var used: SignInWay.Method?
        let opened = URLOpener(
            method: .windowsBrowser("wslview"),
            launch: { method, _ in
                used = method
                return true
            }, say: { said.lines.append($0) })
        said.lines = []
        _ = opened.handle(["url": .string(Self.authorizeURL)])
        #expect(used == .windowsBrowser("wslview"))
        #expect(said.lines == ["auth-sidecar: waiting for the browser (Ctrl-C to cancel)"])
    }

    @Test func outputsHoldNoToken() {
        let result: JSONValue = [
            "accessToken": "eyJ.secret", "idToken": "eyJ.id", "expiresOn": 100, "scopes": ["User.Read"],
            "account": ["username": "alice@contoso.com", "homeAccountId": "h"],
        ]
        let summary = VerbOutput.signInSummary(result)
        #expect(summary["accessToken"] == nil && summary["idToken"] == nil)
        #expect(summary["account"]?["username"] == "alice@contoso.com")
        #expect(VerbOutput.username(result["account"]) == "alice@contoso.com")
        #expect(VerbOutput.accountLines([["username": "a@b", "name": "A", "tenantId": "t"]]) == ["a@b  A  tenant t"])
        let listed: [JSONValue] = [
            ["username": "a@b", "tenantId": "t", "tenants": ["t", "u"], "isCurrent": true],
            ["username": "c@d", "tenantId": "t", "tenants": ["t"], "isCurrent": false],
        ]
        #expect(VerbOutput.accountLines(listed) == ["a@b  tenants t, u  (current)", "c@d  tenant t"])
        #expect(VerbOutput.lifetime(secondsLeft: 3540) == "expires in 59 min")
        #expect(VerbOutput.lifetime(secondsLeft: 7500) == "expires in 2 h 5 min")
        #expect(VerbOutput.lifetime(secondsLeft: -180) == "expired 3 min ago")
    }

    @Test func statusReport() {
        let report = StatusReport(
            configuration: [
                "clientId": "app", "authority": "https://a/common", "scopes": ["User.Read"],
                "cache": ["path": "/c.json", "encryption": ["keyFile": "/k"]],
            ],
            cacheProtection: [
                "setting": "auto", "layer": "keyFile", "encrypted": true,
                "skipped": [["layer": "secretService", "reason": "no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)"]],
            ],
            origins: ["file /cfg.json", "--client-id"], engine: .inProcess, agentSocket: "/run/s", agentState: .notRunning,
            agentInfo: nil,
            accounts: [
                .init(account: ["username": "alice", "homeAccountId": "a.t"], current: true, token: .valid(expiresOn: 1000 + 3600)),
                .init(account: ["username": "bob", "homeAccountId": "b.t"], current: false, token: .signInNeeded("expired")),
            ],
            cache: .success(
                CacheSummary(decoding: [
                    "accessTokens": [["homeAccountId": "a.t", "tenantId": "t", "scopes": ["User.Read", "openid"], "expiresOn": 4600]],
                    "refreshTokenAccounts": ["a.t"], "lastRefreshError": nil,
                ])))
        let text = report.text(now: 1000)
        #expect(text.contains("/c.json (encrypted), key in the key file /k"))
        #expect(text.contains("key store:  cacheProtection auto; secretService skipped: no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)"))
        #expect(text.contains("file /cfg.json, --client-id"))
        #expect(text.contains("/run/s (not running)"))
        #expect(text.contains("alice (current), token expires in 1 h 0 min, tenant -"))
        #expect(text.contains("bob, sign-in needed"))
        #expect(text.contains("tokens:     alice: User.Read openid (tenant t), 60 min left"))
        #expect(text.contains("            alice: refresh token present"))
        #expect(text.contains("            bob: refresh token none"))
        #expect(!text.contains("never-shown") && !report.json.jsonText.contains("never-shown"))
        #expect(report.signedIn)
        let json = report.json
        #expect(json["engine"] == "inProcess")
        #expect(json["cacheProtection"]?["layer"] == "keyFile")
        #expect(json["agent"]?["state"] == "not running")
        #expect(json["accounts"]?.arrayValue?.first?["refreshToken"] == true)
        #expect(json["accounts"]?.arrayValue?.first?["accessTokens"]?.arrayValue?.first?["scopes"] == ["User.Read", "openid"])
        #expect(json["accounts"]?.arrayValue?.first?["token"]?["expiresOn"] == 4600)
    }

    @Test func statusSaysWhenTheKeyCameFromTheKernelKeyringCopy() {
        func text(_ protection: JSONValue) -> String {
            StatusReport(
                configuration: ["clientId": "app", "authority": "https://a/common", "cache": ["path": "/c.json"]],
                cacheProtection: protection, origins: [], engine: .inProcess, agentSocket: "/run/s", agentState: .notRunning,
                agentInfo: nil, accounts: [], cache: nil
            ).text(now: 1000)
        }
        let copied = text(["setting": "auto", "layer": "secretService", "encrypted": true, "skipped": [], "keyCopySeconds": 600])
        #expect(copied.contains("/c.json (encrypted), key in the Secret Service (kept in the kernel keyring for 10 min)"), "\(copied)")
        let asked = text(["setting": "auto", "layer": "secretService", "encrypted": true, "skipped": []])
        #expect(asked.contains("key in the Secret Service") && !asked.contains("kernel keyring for"), "\(asked)")
        #expect(text(["layer": "secretService", "encrypted": true, "keyCopySeconds": 90]).contains("kept in the kernel keyring for 90 s"))
    }
}
