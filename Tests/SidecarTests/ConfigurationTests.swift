import AuthSeams
import AuthTestSupport
import JSON
import JSONRPC
import SidecarTestSupport
import Testing

@testable import Sidecar

@Suite struct ConfigurationTests {
    @Test func appliesTheContractDefaults() throws {
        let config = try ConfigurationOverrides(params: ["clientId": "11111111-2222-3333-4444-555555555555"]).resolved()
        #expect(config.authority == "https://login.microsoftonline.com/common")
        #expect(config.redirectUri == "http://localhost")
        // Not parsed at start (ConfigurationValidator): the listener serves it.
        #expect(try RedirectURI(parsing: Configuration.defaultRedirectUri).port == nil)
        #expect(config.scopes == ["user.read"])
        #expect(config.graphEndpoint == "https://graph.microsoft.com/")
        #expect(config.browser == .system)
        #expect(!config.sharedDeviceMode)
        #expect(config.httpTimeoutSeconds == 30)
        #expect(config.interactiveTimeoutSeconds == 600)
    }

    @Test func readsAndLayersTheTimeouts() throws {
        let file = try ConfigurationOverrides(params: [
            "clientId": "11111111-2222-3333-4444-555555555555", "httpTimeoutSeconds": 5, "interactiveTimeoutSeconds": 60,
        ])
        var flags = ConfigurationOverrides()
        flags.httpTimeoutSeconds = 7
        let config = try flags.merged(over: file).resolved()
        #expect(config.httpTimeoutSeconds == 7)
        #expect(config.interactiveTimeoutSeconds == 60)
        #expect(config.json["httpTimeoutSeconds"] == 7)
        #expect(config.json["interactiveTimeoutSeconds"] == 60)
    }

    @Test func layersSourcesWithTheLaterWinning() throws {
        let file = try ConfigurationOverrides(params: [
            "clientId": "11111111-1111-1111-1111-111111111111", "authority": "https://login.microsoftonline.com/organizations",
        ])
        var flags = ConfigurationOverrides()
        flags.clientId = "22222222-2222-2222-2222-222222222222"
        let config = try flags.merged(over: file).resolved()
        #expect(config.clientId == "22222222-2222-2222-2222-222222222222")
        #expect(config.authority == "https://login.microsoftonline.com/organizations")
    }

    @Test func readsTheCacheSetting() throws {
        #expect(
            try ConfigurationOverrides(params: ["clientId": "11111111-2222-3333-4444-555555555555", "cache": ["persistence": "memory"]]).resolved()
                .cache == .memory)
        #expect(
            try ConfigurationOverrides(params: ["clientId": "11111111-2222-3333-4444-555555555555", "cache": ["path": "/tmp/c.json"]]).resolved()
                .cache == .file(path: "/tmp/c.json"))
        #expect(
            try ConfigurationOverrides(params: [
                "clientId": "11111111-2222-3333-4444-555555555555", "cache": ["path": "/tmp/c.json", "encryption": ["keyFile": "/run/k"]],
            ])
            .resolved().cache == .file(path: "/tmp/c.json", keyFile: "/run/k"))
    }

    @Test func postLogoutRedirectUriIsEchoedOnlyWhenSet() throws {
        let unset = try ConfigurationOverrides(params: ["clientId": "11111111-2222-3333-4444-555555555555"]).resolved()
        #expect(unset.postLogoutRedirectUri == nil && unset.json["postLogoutRedirectUri"] == nil)
        let set = try ConfigurationOverrides(params: [
            "clientId": "11111111-2222-3333-4444-555555555555", "postLogoutRedirectUri": "https://app.example/out",
        ]).resolved()
        #expect(set.json["postLogoutRedirectUri"] == "https://app.example/out")
        let layered = ConfigurationOverrides().merged(over: try ConfigurationOverrides(params: ["postLogoutRedirectUri": "http://localhost/out"]))
        #expect(layered.postLogoutRedirectUri == "http://localhost/out")
    }

    static let badValues: [(JSONObject, String)] = [
        (["authority": "http://login.example.com/common"], "authority"),
        (["authority": "not a url"], "authority"),
        (["graphEndpoint": "ftp://graph"], "graphEndpoint"),
        (["postLogoutRedirectUri": "http://app.example/out"], "postLogoutRedirectUri"),
        (["postLogoutRedirectUri": 7], "postLogoutRedirectUri"),
        (["redirectUri": "http://example.com/cb"], "redirectUri"),
        (["redirectUri": "https://localhost"], "redirectUri"),
        (["redirectUri": "http://[::1]"], "redirectUri"),
        (["redirectUri": "http://127.0.0.2"], "redirectUri"),
        (["redirectUri": "http://localhost/cb?x=1"], "redirectUri"),
        (["redirectUri": "http://user@localhost"], "redirectUri"),
        (["cache": ["path": "relative.json"]], "cache.path"),
        (["cache": ["path": "/c.json", "encryption": ["keyFile": "k"]]], "cache.encryption.keyFile"),
        (["cache": ["path": "/c.json", "encryption": [:]]], "cache.encryption"),
        (["cache": ["path": "/c.json", "encryption": ["keyFile": "/k", "keyCommand": ["pass"]]]], "cache.encryption"),
        (["cache": ["path": "/c.json", "encryption": ["keyCommand": []]]], "cache.encryption.keyCommand"),
        (["cache": ["path": "/c.json", "encryption": ["keyCommand": [""]]]], "cache.encryption.keyCommand"),
        (["cacheProtection": "tpm"], "cacheProtection"),
        (["cacheProtection": "plaintext", "cache": ["path": "/c.json", "encryption": ["keyFile": "/k"]]], "cacheProtection"),
        (["cacheProtection": true], "cacheProtection"),
        (["cache": ["persistence": "memory", "encryption": ["keyFile": "/k"]]], "cache.encryption"),
        (["browser": "lynx"], "browser"),
        (["scopes": "user.read"], "scopes"),
        (["clientId": ""], "clientId"),
        (["httpTimeoutSeconds": 0], "httpTimeoutSeconds"),
        (["httpTimeoutSeconds": 301], "httpTimeoutSeconds"),
        (["httpTimeoutSeconds": "30"], "httpTimeoutSeconds"),
        (["interactiveTimeoutSeconds": 0], "interactiveTimeoutSeconds"),
        (["interactiveTimeoutSeconds": 3601], "interactiveTimeoutSeconds"),
        (["secretServiceKeyCacheSeconds": -1], "secretServiceKeyCacheSeconds"),
        (["secretServiceKeyCacheSeconds": 3601], "secretServiceKeyCacheSeconds"),
    ]

    @Test(arguments: badValues)
    func rejectsBadValuesNamingTheKey(extra: JSONObject, member: String) {
        var params: JSONObject = ["clientId": "11111111-2222-3333-4444-555555555555"]
        for (key, value) in extra { params[key] = value }
        do {
            _ = try ConfigurationOverrides(params: .object(params)).resolved()
            Issue.record("accepted \(extra)")
        } catch {
            #expect(error.code == -32602)
            #expect(error.data["member"]?.stringValue == member)
        }
    }

    @Test func allowsHTTPOnlyForLoopbackHosts() throws {
        for authority in ["http://127.0.0.1:8443/common", "http://localhost/tenant", "http://[::1]:9/x"] {
            #expect(
                try ConfigurationOverrides(params: ["clientId": "11111111-2222-3333-4444-555555555555", "authority": .string(authority)]).resolved()
                    .authority == authority)
        }
    }

    @Test func findsTheDefaultCacheUnderXDG() {
        #expect(Configuration.defaultCachePath(environment: ["XDG_CACHE_HOME": "/x"]) == "/x/auth-sidecar/msal_token_cache.json")
        #expect(Configuration.defaultCachePath(environment: ["HOME": "/home/u"]) == "/home/u/.cache/auth-sidecar/msal_token_cache.json")
    }
}

@Suite struct SidecarServiceTests {
    /// No request leaves: every one fails as with the network down.
    static let fakes = InProcessServer.Fakes(transport: FakeHTTPTransport { _ throws(HTTPError) in throw .network("no network here") })

    private func service(clientId: String? = nil) throws -> SidecarService {
        var options = SidecarService.Options(policy: OpenSessionPolicy(), dependencies: Self.fakes.dependencies)
        options.startup.clientId = clientId
        return try SidecarService(options: options, logger: .init(label: "test"))
    }

    @Test func answersNotInitializedBeforeConfiguration() throws {
        guard case .failure(let error) = try service().route(forRequest: "getDeviceInformation") else {
            Issue.record("expected a failure route")
            return
        }
        #expect(error.code == -32002)
    }

    @Test func routesEveryMethodOfTheContract() throws {
        for method in ["getCurrentAccount", "getAccounts", "acquireToken", "acquireTokenSilent", "signout", "callGraph"] {
            switch try service(clientId: "11111111-2222-3333-4444-555555555555").route(forRequest: method) {
            case .concurrent, .quickOrConcurrent: continue
            default: Issue.record("\(method) is not routed to a handler")
            }
        }
        guard case .failure(let error) = try service(clientId: "11111111-2222-3333-4444-555555555555").route(forRequest: "acquireTokens") else {
            return
        }
        #expect(error.code == -32601)
    }

    @Test func hidesDiagnosticsUnlessEnabled() throws {
        guard case .failure(let error) = try service().route(forRequest: "diagnostics/sleep") else {
            Issue.record("diagnostics routed without the flag")
            return
        }
        #expect(error.data["planned"] == nil)
    }

    @Test func initializesOnce() throws {
        let service = try service()
        guard case .immediate(let initialize) = service.route(forRequest: "initialize") else {
            Issue.record("initialize not immediate")
            return
        }
        let result = try initialize(["clientId": "11111111-2222-3333-4444-555555555555", "processId": 42])
        #expect(result["serverInfo"]?["name"] == "auth-sidecar")
        #expect(result["capabilities"]?["methods"]?.arrayValue?.contains("getDeviceInformation") == true)
        #expect(throws: RPCError.self) { try initialize(["clientId": "11111111-2222-3333-4444-555555555555"]) }
        guard case .immediate = service.route(forRequest: "getDeviceInformation") else {
            Issue.record("still not initialized")
            return
        }
    }
}

/// `ConfigurationOverrides.json` is what `ConfigurationOverrides(params:)` reads back.
@Suite struct ConfigurationOverridesJSONTests {
    @Test func roundTrips() throws {
        var overrides = ConfigurationOverrides()
        #expect(overrides.json == [:])
        overrides.clientId = "app"
        overrides.authority = "https://login.microsoftonline.com/organizations"
        overrides.knownAuthorities = ["127.0.0.1"]
        overrides.scopes = ["User.Read"]
        overrides.cache = .file(path: "/c.json", keyFile: "/k")
        overrides.browser = .client
        overrides.sharedDeviceMode = false
        overrides.httpTimeoutSeconds = 5
        #expect(try ConfigurationOverrides(params: overrides.json) == overrides)
        overrides.cache = .memory
        #expect(try ConfigurationOverrides(params: overrides.json) == overrides)
    }
}
