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
        let typed = try AcquireTokenRequest(decoding: params)
        let correlationId = typed.correlationId ?? AuthJSON.correlationId()
        if typed.flow == .deviceCode {
            var request = DeviceCodeRequest { info in
                context.notify(
                    "deviceCode",
                    params: [
                        "requestId": context.id.json, "userCode": .string(info.userCode),
                        "verificationUri": .string(info.verificationUri), "message": .string(info.message),
                        "expiresOn": .int(info.expiresOn),
                    ])
            }
            request.scopes = try scopes(typed.scopes)
            request.authority = try AuthJSON.authority(typed.authority, of: app.configuration)
            request.claims = typed.claims
            return try await AuthErrorMapping.translating {
                AuthJSON.tokenResult(try await app.acquireTokenByDeviceCode(request, correlationId: correlationId))
            }
        }
        var request = InteractiveRequest()
        let target = typed.proofOfPossession?.target
        request.token = RequestedToken(sshKey: typed.sshCertificate?.binding)
        request.scopes = try scopes(typed.scopes, sshKey: request.sshKey)
        request.prompt = typed.prompt ?? .promptIfNecessary
        request.loginHint = typed.loginHint
        request.domainHint = typed.domainHint
        request.account = typed.account
        request.authority = try AuthJSON.authority(typed.authority, of: app.configuration)
        request.claims = typed.claims
        request.extraScopesToConsent = typed.extraScopesToConsent ?? []
        request.extraQueryParameters = typed.extraQueryParameters
        if typed.flow == .paste {
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
        let typed = try AcquireTokenSilentRequest(decoding: params)
        var request = SilentRequest()
        request.token = RequestedToken(sshKey: typed.sshCertificate?.binding)
        request.scopes = try scopes(typed.scopes, sshKey: request.sshKey)
        request.account = typed.account
        request.authority = try AuthJSON.authority(typed.authority, of: app.configuration)
        request.forceRefresh = typed.forceRefresh
        request.claims = typed.claims
        return (request, typed.correlationId ?? AuthJSON.correlationId(), typed.proofOfPossession?.target)
    }

    /// `signHttpRequest`: a fresh signed HTTP request for `method` and `url` with the account's
    /// cached PoP token for `scopes` (no request to the identity service while it is valid;
    /// else the refresh token gets one, as `acquireTokenSilent` would).
    func signHttpRequest(_ typed: SignHttpRequestRequest, _ context: RequestContext) async throws -> SignedHttpRequestResponse {
        guard let target = typed.target.target else { throw RPCError.internalError("the request's target was not decoded") }
        var request = SilentRequest()
        request.scopes = try scopes(typed.scopes)
        request.account = typed.account
        let correlationId = typed.correlationId ?? AuthJSON.correlationId()
        return try await AuthErrorMapping.translating {
            request.token = .proofOfPossession(try app.popBinding())
            request.popTarget = target
            let result = try await app.acquireTokenSilently(request, correlationId: correlationId)
            guard result.tokenType.lowercased() == PopBinding.tokenType else {
                throw AuthError(.malformedResponse, "a proof-of-possession request was answered a \(result.tokenType.prefix(16)) token")
            }
            let shr = try PopParams.signed(result, target: target, app: app)
            return SignedHttpRequestResponse(
                signedHttpRequest: shr, authorizationHeader: SignedHttpRequest.authorizationHeader(shr), tokenType: result.tokenType,
                expiresOn: result.expiresOn, fromCache: result.fromCache, correlationId: result.correlationId)
        }
    }

    func getCurrentAccount(_ request: GetCurrentAccountRequest, _ context: RequestContext) async throws -> CurrentAccountResponse {
        try await AuthErrorMapping.translating {
            let (current, previous) = try await app.currentAccount()
            return CurrentAccountResponse(account: AuthJSON.account(current), previousAccount: AuthJSON.account(previous))
        }
    }

    func getAccounts(_ request: GetAccountsRequest, _ context: RequestContext) async throws -> AccountsResponse {
        try await AuthErrorMapping.translating {
            AccountsResponse(accounts: try await app.accountListing(username: request.username).map(AuthJSON.listedAccount))
        }
    }

    func setCurrentAccount(_ request: SetCurrentAccountRequest, _ context: RequestContext) async throws -> CurrentAccountResponse {
        try await AuthErrorMapping.translating {
            let (account, previous) = try await app.setCurrentAccount(request.account)
            return CurrentAccountResponse(account: AuthJSON.account(account), previousAccount: AuthJSON.account(previous))
        }
    }

    func signout(_ request: SignoutRequest, _ context: RequestContext) async throws -> SignoutResponse {
        let browser: (any BrowserLauncher)? = browserMode == .client ? ClientBrowserLauncher(context: context) : nil
        return try await AuthErrorMapping.translating {
            let removed = try await app.signOut(request.account, fromBrowser: request.signoutFromBrowser, browser: browser)
            return SignoutResponse(signedOut: true, account: AuthJSON.account(removed.account), browserSignOut: removed.browserSignOut?.rawValue)
        }
    }

    /// What the cache holds for this client, without a secret: `status`'s cache lines, read by
    /// the engine that holds the key (a verb never opens the cache file itself).
    func getCacheSummary(_ request: GetCacheSummaryRequest, _ context: RequestContext) async throws -> CacheSummary {
        let assertion = await app.clientAssertionStatus()
        return try await AuthErrorMapping.translating {
            let (inventory, lastError) = try app.cacheInventory()
            var summary = CacheSummary()
            summary.accessTokens = inventory.accessTokens
            summary.refreshTokenAccounts = inventory.refreshTokenAccounts
            summary.lastRefreshError = lastError
            summary.clientAssertion = assertion.map {
                ["source": .string($0.source), "expiresOn": $0.expiresOn.map(JSONValue.int) ?? .null, "error": JSONValue($0.reason)]
            }
            return summary
        }
    }

    func callGraph(_ typed: CallGraphRequest, _ context: RequestContext) async throws -> GraphCallResponse {
        var request = GraphRequest()
        if let path = typed.path { request.path = path }
        request.method = typed.httpMethod ?? "GET"
        request.apiVersion = typed.apiVersion ?? "v1.0"
        request.query = typed.query
        request.headers = typed.headers
        request.body = typed.body
        request.account = typed.account
        request.scopes = try scopes(typed.scopes)
        request.tokenCheck = graphTokens
        request.allPages = typed.allPages
        if let maxPages = typed.maxPages { request.maxPages = maxPages }
        request.timeout = typed.timeoutSeconds.map { .seconds($0) }
        let correlationId = typed.correlationId ?? AuthJSON.correlationId()
        return try await AuthErrorMapping.translating {
            try GraphCallResponse(decoding: try await graph.call(request, correlationId: correlationId).json)
        }
    }

    /// The request's `scopes`, else (naming no resource scope) the session's default ones, or
    /// for an `ssh-cert` request its ``SSHCertScope``.
    private func scopes(_ requested: [String]?, sshKey: SSHKeyBinding? = nil) throws(RPCError) -> [String] {
        guard sshKey != nil else { return Scopes.requested(requested, defaults: defaultScopes) }
        return Scopes.requested(
            requested, defaults: [try SSHCertScope.scope(configured: sshCertScope, authority: app.configuration.authority)])
    }

    /// CR, LF, NUL and the other C0 controls (and DEL): never part of a URL path or a header.
    static func hasControlCharacters(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// An object of string values, as ordered pairs; without `controlCharacters`, a name or
    /// value holding one is refused (a header line cannot carry CR or LF).
    static func stringPairs(_ p: Params, _ key: String, controlCharacters: Bool = true) throws(RPCError) -> [(String, String)] {
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
