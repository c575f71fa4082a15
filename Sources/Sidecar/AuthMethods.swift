import AuthCore
import AuthSeams
import Graph
import JSON
import JSONRPC

/// The handlers of the auth methods: params in, ``PublicClientApplication`` call, JSON out.
struct AuthMethods: Sendable {
    let app: PublicClientApplication
    let graph: GraphClient
    /// The session's own (``ApplicationRegistry`` shares the rest between sessions).
    var browserMode: Configuration.BrowserMode
    /// The session's default scopes, what a request naming no resource scope is for; its own,
    /// like ``browserMode``: each request reaches the shared engine with its scopes explicit.
    var defaultScopes: [String]
    /// The session's `sshCertScope` (`nil`: the PAS scope of the authority's cloud).
    var sshCertScope: String? = nil
    /// What protects the file cache (`nil`: a memory cache, or test dependencies).
    var cacheProtection: CacheProtectionReport? = nil
    /// Silent results from memory, kept serialized.
    let silentReplies = SilentReplyCache()
    /// What `callGraph`'s token may be for (the forward socket's rule); `nil`: no limit.
    var graphTokens: GraphTokenCheck? = nil

    func acquireToken(_ params: JSONValue?, _ context: RequestContext) async throws -> JSONValue {
        let p = try Params(params, allowed: SidecarMethod.acquireToken.parameters)
        let flow = try p.optional("flow", oneOf: ["browser", "deviceCode", "paste"]) ?? "browser"
        let correlationId = try AuthJSON.correlationId(p)
        if flow == "deviceCode" {
            for key in [
                "promptType", "loginHint", "domainHint", "account", "extraScopesToConsent", "extraQueryParameters", "sshCertificate",
                "proofOfPossession",
            ]
            where p.members[key] != nil {
                throw RPCError.invalidParams("'\(key)' does not apply to the device code flow", member: key)
            }
            var request = DeviceCodeRequest { info in
                context.notify(
                    "deviceCode",
                    params: [
                        "requestId": context.id.json, "userCode": .string(info.userCode),
                        "verificationUri": .string(info.verificationUri), "message": .string(info.message),
                        "expiresOn": .int(info.expiresOn),
                    ])
            }
            request.scopes = try scopes(p)
            request.authority = try AuthJSON.authority(p, of: app.configuration)
            request.claims = try p.optional("claims")
            return try await AuthErrorMapping.translating {
                AuthJSON.tokenResult(try await app.acquireTokenByDeviceCode(request, correlationId: correlationId))
            }
        }
        var request = InteractiveRequest()
        let target = try PopParams.target(p)
        request.token = RequestedToken(sshKey: try SSHCertScope.key(p))
        request.scopes = try scopes(p, sshKey: request.sshKey)
        request.prompt = try p.optional("promptType", oneOf: PromptType.allCases.map(\.rawValue)).flatMap(PromptType.init) ?? .promptIfNecessary
        request.loginHint = try p.optional("loginHint")
        request.domainHint = try p.optional("domainHint")
        request.account = try AuthJSON.accountReference(p)
        request.authority = try AuthJSON.authority(p, of: app.configuration)
        request.claims = try p.optional("claims")
        request.extraScopesToConsent = try p.optional("extraScopesToConsent") ?? []
        request.extraQueryParameters = try Self.stringPairs(p, "extraQueryParameters")
        if flow == "paste" {
            return try await AuthErrorMapping.translating {
                if target != nil { request.token = .proofOfPossession(try app.popBinding()) }
                request.popTarget = target
                let prompt = ClientPastePrompt(context: context)
                let result = try await app.acquireTokenByPastedAddress(request, prompt: prompt, correlationId: correlationId)
                return try PopParams.tokenResult(result, target: target, app: app)
            }
        }
        let browser: (any BrowserLauncher)? = browserMode == .client ? ClientBrowserLauncher(context: context) : nil
        return try await AuthErrorMapping.translating {
            if target != nil { request.token = .proofOfPossession(try app.popBinding()) }
            request.popTarget = target
            let result = try await app.acquireTokenInteractively(request, browser: browser, correlationId: correlationId)
            return try PopParams.tokenResult(result, target: target, app: app)
        }
    }

    func acquireTokenSilent(_ params: JSONValue?, _ context: RequestContext) async throws -> JSONValue {
        var (request, correlationId, target) = try silentRequest(params)
        return try await AuthErrorMapping.translating {
            if target != nil { request.token = .proofOfPossession(try app.popBinding()) }
            request.popTarget = target
            let result = try await app.acquireTokenSilently(request, correlationId: correlationId)
            return try PopParams.tokenResult(result, target: target, app: app)
        }
    }

    /// `acquireTokenSilent`'s result when it can be had from memory without waiting, or from a
    /// quick read of the cache when the reader is idle
    /// (``PublicClientApplication/cachedSilentAnswer(_:checkedAfter:mayRead:)``), serialized;
    /// `nil`: the full call (``acquireTokenSilent(_:_:)``) answers, errors included.
    func acquireTokenSilentOnReader(_ params: JSONValue?, moment: ReaderMoment) -> QuickResult? {
        // A PoP result is signed afresh by the full call (its `ts` and nonce are its own).
        guard let (request, correlationId, target) = try? silentRequest(params), target == nil,
            let answer = app.cachedSilentAnswer(request, checkedAfter: moment.receivedAt, mayRead: moment.idle)
        else { return nil }
        let replies = silentReplies
        return QuickResult(
            serialized: { replies.result(of: answer, correlationId: correlationId) },
            value: { AuthJSON.tokenResult(answer.result(correlationId)) })
    }

    private func silentRequest(_ params: JSONValue?) throws(RPCError) -> (SilentRequest, correlationId: String, PopRequestTarget?) {
        let p = try Params(params, allowed: SidecarMethod.acquireTokenSilent.parameters)
        let target = try PopParams.target(p)
        var request = SilentRequest()
        request.token = RequestedToken(sshKey: try SSHCertScope.key(p))
        request.scopes = try scopes(p, sshKey: request.sshKey)
        request.account = try AuthJSON.accountReference(p)
        request.authority = try AuthJSON.authority(p, of: app.configuration)
        request.forceRefresh = try p.optional("forceRefresh") ?? false
        request.claims = try p.optional("claims")
        return (request, try AuthJSON.correlationId(p), target)
    }

    /// `signHttpRequest`: a fresh signed HTTP request for `method` and `url` with the account's
    /// cached PoP token for `scopes` (no request to the identity service while it is valid;
    /// else the refresh token gets one, as `acquireTokenSilent` would).
    func signHttpRequest(_ params: JSONValue?, _ context: RequestContext) async throws -> JSONValue {
        let p = try Params(params, allowed: PopParams.signMembers)
        let target = try PopParams.target(of: p)
        var request = SilentRequest()
        request.scopes = try scopes(p)
        request.account = try AuthJSON.accountReference(p)
        let correlationId = try AuthJSON.correlationId(p)
        return try await AuthErrorMapping.translating {
            request.token = .proofOfPossession(try app.popBinding())
            request.popTarget = target
            let result = try await app.acquireTokenSilently(request, correlationId: correlationId)
            guard result.tokenType.lowercased() == PopBinding.tokenType else {
                throw AuthError(.malformedResponse, "a proof-of-possession request was answered a \(result.tokenType.prefix(16)) token")
            }
            let shr = try PopParams.signed(result, target: target, app: app)
            return [
                "signedHttpRequest": .string(shr), "authorizationHeader": .string(SignedHttpRequest.authorizationHeader(shr)),
                "tokenType": .string(result.tokenType), "expiresOn": .int(result.expiresOn), "fromCache": .bool(result.fromCache),
                "correlationId": .string(result.correlationId),
            ]
        }
    }

    func getCurrentAccount(_ params: JSONValue?, _ context: RequestContext) async throws -> JSONValue {
        _ = try Params(params, allowed: SidecarMethod.getCurrentAccount.parameters)
        return try await AuthErrorMapping.translating {
            let (current, previous) = try await app.currentAccount()
            return ["account": AuthJSON.account(current), "previousAccount": AuthJSON.account(previous)]
        }
    }

    func getAccounts(_ params: JSONValue?, _ context: RequestContext) async throws -> JSONValue {
        let username: String? = try Params(params, allowed: SidecarMethod.getAccounts.parameters).optional("username")
        return try await AuthErrorMapping.translating {
            ["accounts": .array(try await app.accountListing(username: username).map(AuthJSON.listedAccount))]
        }
    }

    func setCurrentAccount(_ params: JSONValue?, _ context: RequestContext) async throws -> JSONValue {
        let p = try Params(params, allowed: SidecarMethod.setCurrentAccount.parameters)
        guard let reference = try AuthJSON.accountReference(p) else {
            throw RPCError.invalidParams("missing member 'account'", member: "account")
        }
        return try await AuthErrorMapping.translating {
            let (account, previous) = try await app.setCurrentAccount(reference)
            return ["account": AuthJSON.account(account), "previousAccount": AuthJSON.account(previous)]
        }
    }

    func signout(_ params: JSONValue?, _ context: RequestContext) async throws -> JSONValue {
        let p = try Params(params, allowed: SidecarMethod.signout.parameters)
        let reference = try AuthJSON.accountReference(p)
        let fromBrowser: Bool = try p.optional("signoutFromBrowser") ?? false
        let browser: (any BrowserLauncher)? = browserMode == .client ? ClientBrowserLauncher(context: context) : nil
        return try await AuthErrorMapping.translating {
            let removed = try await app.signOut(reference, fromBrowser: fromBrowser, browser: browser)
            var result: JSONObject = ["signedOut": true, "account": AuthJSON.account(removed.account)]
            if let browserSignOut = removed.browserSignOut { result["browserSignOut"] = .string(browserSignOut.rawValue) }
            return .object(result)
        }
    }

    /// What the cache holds for this client, without a secret: `status`'s cache lines, read by
    /// the engine that holds the key (a verb never opens the cache file itself).
    func getCacheSummary(_ params: JSONValue?, _ context: RequestContext) async throws -> JSONValue {
        _ = try Params(params, allowed: SidecarMethod.getCacheSummary.parameters)
        let assertion = await app.clientAssertionStatus()
        return try await AuthErrorMapping.translating {
            let (inventory, lastError) = try app.cacheInventory()
            var summary: JSONObject = [
                "accessTokens": .array(
                    inventory.accessTokens.map {
                        [
                            "homeAccountId": .string($0.homeAccountId), "tenantId": .string($0.tenant), "scopes": JSONValue($0.scopes),
                            "expiresOn": .int($0.expiresOn),
                        ]
                    }),
                "refreshTokenAccounts": JSONValue(inventory.refreshTokenAccounts.sorted()),
                "lastRefreshError": lastError.map(JSONValue.object) ?? .null,
            ]
            if let assertion {
                summary["clientAssertion"] = [
                    "source": .string(assertion.source), "expiresOn": assertion.expiresOn.map(JSONValue.int) ?? .null,
                    "error": JSONValue(assertion.reason),
                ]
            }
            return .object(summary)
        }
    }

    func callGraph(_ params: JSONValue?, _ context: RequestContext) async throws -> JSONValue {
        let p = try Params(params, allowed: SidecarMethod.callGraph.parameters)
        var request = GraphRequest()
        if let path: String = try p.optional("path") {
            guard path.hasPrefix("/"), !path.contains("://"), !path.contains("/../"), !path.hasSuffix("/.."),
                !Self.hasControlCharacters(path)
            else {
                throw RPCError.invalidParams("'path' must be a path under the Graph endpoint, starting with /", member: "path")
            }
            request.path = path
        }
        request.method = try p.optional("method", oneOf: ["GET", "POST", "PUT", "PATCH", "DELETE"]) ?? "GET"
        request.apiVersion = try p.optional("apiVersion", oneOf: ["v1.0", "beta"]) ?? "v1.0"
        request.query = try Self.stringPairs(p, "query")
        request.headers = try Self.stringPairs(p, "headers", controlCharacters: false)
        if request.headers.contains(where: { $0.0.lowercased() == "authorization" }) {
            throw RPCError.invalidParams("'headers' may not set Authorization: the sidecar does", member: "headers.Authorization")
        }
        request.body = p.members["body"]
        request.account = try AuthJSON.accountReference(p)
        request.scopes = try scopes(p)
        request.tokenCheck = graphTokens
        request.allPages = try p.optional("allPages") ?? false
        if let maxPages: Int = try p.optional("maxPages") {
            guard (1...100).contains(maxPages) else { throw RPCError.invalidParams("'maxPages' must be 1 to 100", member: "maxPages") }
            request.maxPages = maxPages
        }
        if let seconds: Int = try p.optional("timeoutSeconds") {
            guard (1...300).contains(seconds) else { throw RPCError.invalidParams("'timeoutSeconds' must be 1 to 300", member: "timeoutSeconds") }
            request.timeout = .seconds(seconds)
        }
        let correlationId = try AuthJSON.correlationId(p)
        return try await AuthErrorMapping.translating {
            try await graph.call(request, correlationId: correlationId).json
        }
    }

    /// The request's `scopes`, else (naming no resource scope) the session's default ones, or
    /// for an `ssh-cert` request its ``SSHCertScope``.
    private func scopes(_ p: Params, sshKey: SSHKeyBinding? = nil) throws(RPCError) -> [String] {
        guard sshKey != nil else { return Scopes.requested(try p.optional("scopes"), defaults: defaultScopes) }
        return Scopes.requested(
            try p.optional("scopes"), defaults: [try SSHCertScope.scope(configured: sshCertScope, authority: app.configuration.authority)])
    }

    /// CR, LF, NUL and the other C0 controls (and DEL): never part of a URL path or a header.
    private static func hasControlCharacters(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// An object of string values, as ordered pairs; without `controlCharacters`, a name or
    /// value holding one is refused (a header line cannot carry CR or LF).
    private static func stringPairs(_ p: Params, _ key: String, controlCharacters: Bool = true) throws(RPCError) -> [(String, String)] {
        guard let object: JSONObject = try p.optional(key) else { return [] }
        var pairs: [(String, String)] = []
        for (name, value) in object {
            guard let text = value.stringValue else {
                throw .invalidParams("'\(key).\(name)' must be a string", member: "\(key).\(name)")
            }
            if !controlCharacters, hasControlCharacters(name) || hasControlCharacters(text) {
                throw .invalidParams("'\(key).\(name)' may not contain control characters (CR, LF, ...)", member: "\(key).\(name)")
            }
            pairs.append((name, text))
        }
        return pairs
    }
}
