import POSIXSupport
import TokenCache

/// App tokens of a confidential client whose credential is a client assertion (workload
/// identity federation in CI): the client credentials grant, with the assertion read from its
/// source at each exchange and never kept.
///
/// Cached as MSAL for Python caches app tokens: no account (`home_account_id` empty), the
/// app's `client_id`, realm = the tenant; a valid one (5-minute margin) costs no request. One
/// exchange per token: identical concurrent requests share one (``RefreshCoordinator``) and
/// processes sharing the cache take turns (``RefreshLock``), the ones that waited finding the
/// new token in the cache. No refresh token exists, none is asked for.
struct AppTokenFlow: Sendable {
    let configuration: ClientConfiguration
    let dependencies: AuthDependencies
    let resolver: AuthorityResolver
    let coordinator: RefreshCoordinator
    let source: any ClientAssertionSource

    func run(_ request: SilentRequest, correlationId: String) async throws -> TokenResult {
        let authority = try configuration.authority(for: request.authority)
        guard !authority.isMultiTenant else {
            throw AuthError(
                .invalidConfiguration,
                "an app token needs a tenant, not '\(authority.tenant)': set the authority's tenant (AZURE_TENANT_ID)")
        }
        let scopes = Scopes.requested(request.scopes, defaults: configuration.defaultScopes)
        let useCache = !request.forceRefresh && request.claims == nil
        if useCache, let cached = try cached(authority, scopes, correlationId) { return cached }
        let key = [
            "app", configuration.clientId, authority.url, scopes.map { $0.lowercased() }.sorted().joined(separator: " "), useCache ? "" : "force",
        ]
        .joined(separator: "|").lowercased()
        let waitingSince = POSIX.realTimeMilliseconds()
        return try await coordinator.run(key: key) {
            try await dependencies.cache.refreshLock.withLock(key: key, timeout: SilentFlow.refreshWait) {
                if useCache, let cached = try cached(authority, scopes, correlationId) { return cached }
                if let failure = failure(of: key, since: waitingSince) { throw failure }
                return try await exchange(authority, scopes, correlationId, key: key)
            }
        }
    }

    /// The failure of the exchange for `key` that another process made while this one waited
    /// for the refresh lock (`since`: real-time milliseconds), if any: the waiter answers with
    /// it rather than asking a source that just failed (a hanging CI endpoint, once, not once
    /// per process).
    private func failure(of key: String, since: Int64) -> AuthError? {
        guard let record = dependencies.cache.refreshErrors.read(), record["refreshKey"]?.stringValue == key,
            let at = record["atMilliseconds"]?.intValue, at >= since,
            let kind = record["error"]?.stringValue.flatMap(AuthError.Kind.init(rawValue:))
        else { return nil }
        var error = AuthError(kind, (record["message"]?.stringValue ?? "the exchange failed") + " (the exchange another process just made)")
        error.errorCodes = record["errorCodes"]?.arrayValue?.compactMap { $0.intValue.map { Int(clamping: $0) } }
        return error
    }

    /// A valid cached app token for these scopes, from one read of the cache.
    private func cached(_ authority: Authority, _ scopes: [String], _ correlationId: String) throws -> TokenResult? {
        let clientId = configuration.clientId
        let now = dependencies.clock.now()
        return try CacheAccess.run {
            try dependencies.cache.read { document -> TokenResult? in
                let view = try resolver.cacheView(authority, in: document)
                let realms = [view.metadataRealm, authority.tenant].compactMap { $0 }
                for realm in realms {
                    guard
                        let token = document.accessToken(
                            homeAccountId: "", environments: view.environments, realm: realm, clientId: clientId,
                            scopes: ScopeSet(scopes), keyId: nil),
                        !token.isExpired(at: now), !token.needsRefresh(at: now), TokenResponse.isBearer(token.tokenType)
                    else { continue }
                    return result(
                        secret: token.secret, expiresOn: token.expiresOn, scopes: token.scopes.resourceScopes,
                        authority: authority, tenant: token.realm, correlationId: correlationId, fromCache: true)
                }
                return nil
            }
        }
    }

    /// Reads a fresh assertion and redeems it; the app token is saved with no account. The
    /// outcome is noted beside the cache as a refresh's is (`status`'s last failure).
    private func exchange(_ authority: Authority, _ scopes: [String], _ correlationId: String, key: String) async throws -> TokenResult {
        let app = appAccount(authority, tenant: authority.tenant)
        let tokens: TokenResponse
        let realm: String
        do {
            let resolved = try await resolver.resolve(authority)
            realm = resolved.metadata.realm ?? authority.tenant
            tokens = try await redeem(scopes, at: resolved.metadata.tokenEndpoint, correlationId)
            SilentFlow.noteRefresh(failure: nil, account: app, clientId: configuration.clientId, dependencies: dependencies)
        } catch let error as AuthError {
            SilentFlow.noteRefresh(
                failure: error, account: app, clientId: configuration.clientId, dependencies: dependencies, refreshKey: key)
            throw error
        }
        let now = dependencies.clock.now()
        let granted = tokens.scope ?? scopes
        try CacheAccess.run {
            try dependencies.cache.save(
                TokenResponseRecord(
                    clientId: configuration.clientId, environment: authority.cacheEnvironment, realm: realm,
                    homeAccountId: "", localAccountId: "", username: "", createsAccount: false, scopes: granted,
                    accessToken: tokens.accessToken, tokenType: tokens.tokenType, cachedAt: now,
                    expiresOn: now + tokens.expiresIn, extendedExpiresOn: tokens.extExpiresIn.map { now + $0 },
                    refreshOn: tokens.refreshIn.map { now + $0 }))
        }
        return result(
            secret: tokens.accessToken, expiresOn: now + tokens.expiresIn, scopes: ScopeSet(granted).resourceScopes,
            authority: authority, tenant: realm, correlationId: correlationId, fromCache: false)
    }

    /// The client credentials grant with an assertion read now; a refusal names the source.
    private func redeem(_ scopes: [String], at endpoint: String, _ correlationId: String) async throws -> TokenResponse {
        let assertion = try await source.assertion(transport: dependencies.transport)
        let client = TokenEndpointClient(
            transport: dependencies.transport, clientId: configuration.clientId,
            clock: dependencies.clock, logger: dependencies.logger)
        dependencies.logger.debug("exchanging a client assertion for an app token", metadata: ["source": "\(source.name)"])
        do {
            return try await client.redeem(
                ClientCredentialsGrant(scopes: scopes, assertion: assertion.jwt).fields, at: endpoint, correlationId: correlationId)
        } catch var error as AuthError where error.oauthError != nil {
            let age = assertion.lifeText(now: dependencies.clock.now())
            error.message = "the token endpoint refused the client assertion from \(source.name)\(age): \(error.message)"
            throw error
        }
    }

    /// The app as the doors report its tokens' account: no home account, its client id as the
    /// user name.
    private func appAccount(_ authority: Authority, tenant: String) -> Account {
        Account(
            homeAccountId: "", localAccountId: configuration.clientId, environment: authority.cacheEnvironment,
            tenantId: tenant, username: configuration.clientId)
    }

    /// An app token as the doors report one.
    private func result(
        secret: String, expiresOn: Int64, scopes: [String], authority: Authority, tenant: String, correlationId: String,
        fromCache: Bool
    ) -> TokenResult {
        TokenResult(
            accessToken: secret, tokenType: "Bearer", expiresOn: expiresOn, scopes: scopes,
            account: appAccount(authority, tenant: tenant), idToken: nil,
            tenantId: tenant, authority: authority.url, correlationId: correlationId, fromCache: fromCache)
    }
}
