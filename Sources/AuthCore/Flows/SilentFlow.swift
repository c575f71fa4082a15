import TokenCache

/// A token without UI: a valid cached access token (5-minute margin), else the refresh
/// token. Identical concurrent requests share one refresh (``RefreshCoordinator``).
struct SilentFlow: Sendable {
    let configuration: ClientConfiguration
    let dependencies: AuthDependencies
    let resolver: AuthorityResolver
    let coordinator: RefreshCoordinator

    func run(_ request: SilentRequest, account: Account, correlationId: String) async throws -> TokenResult {
        let resolved = try await resolver.resolve(try configuration.authority(for: request.authority))
        let authority = resolved.authority
        let metadata = resolved.metadata
        let scopes = Scopes.deduplicated(request.scopes ?? configuration.defaultScopes)
        let useCache = !request.forceRefresh && request.claims == nil
        let lookup = Lookup(authority: authority, realm: resolved.realm, environments: resolved.environments, scopes: scopes, account: account)
        if useCache, let cached = try cachedToken(lookup, correlationId: correlationId), !cached.needsRefresh {
            return cached.result
        }
        let key = [account.homeAccountId.lowercased(), lookup.realm.lowercased(), scopes.map { $0.lowercased() }.sorted().joined(separator: " "),
                   request.claims ?? "", request.forceRefresh ? "force" : ""].joined(separator: "|")
        return try await coordinator.run(key: key) {
            // A request that arrives just after a refresh finds its token here.
            if useCache, let cached = try cachedToken(lookup, correlationId: correlationId), !cached.needsRefresh {
                return cached.result
            }
            do {
                return try await refresh(lookup, metadata: metadata, claims: request.claims, correlationId: correlationId)
            } catch let error as AuthError where error.kind != .interactionRequired {
                // Proactive refresh failed: a still-valid token is better than an error.
                if useCache, let cached = try cachedToken(lookup, correlationId: correlationId) { return cached.result }
                throw error
            }
        }
    }

    struct Lookup {
        let authority: Authority
        let realm: String
        let environments: [String]
        let scopes: [String]
        let account: Account
    }

    private func cachedToken(_ lookup: Lookup, correlationId: String) throws -> (result: TokenResult, needsRefresh: Bool)? {
        let now = dependencies.clock.now()
        let environments = lookup.environments
        let token = try CacheAccess.run {
            try dependencies.cache.accessToken(homeAccountId: lookup.account.homeAccountId, environments: environments,
                                               realm: lookup.realm, clientId: configuration.clientId, scopes: lookup.scopes)
        }
        guard let token, !token.isExpired(at: now) else { return nil }
        let idToken = try CacheAccess.run {
            try dependencies.cache.idToken(homeAccountId: lookup.account.homeAccountId, environments: environments,
                                           realm: lookup.realm, clientId: configuration.clientId)
        }
        let result = TokenResult(
            accessToken: token.secret, tokenType: token.tokenType ?? "Bearer", expiresOn: token.expiresOn,
            scopes: token.scopes.scopes.filter { !Scopes.reserved.contains($0.lowercased()) }, account: lookup.account,
            idToken: idToken?.secret, tenantId: lookup.account.tenantId, authority: lookup.authority.url,
            correlationId: correlationId, fromCache: true)
        return (result, token.needsRefresh(at: now))
    }

    private func refresh(_ lookup: Lookup, metadata: OpenIDMetadata, claims: String?, correlationId: String) async throws -> TokenResult {
        let environments = lookup.environments
        let family = try CacheAccess.run {
            try dependencies.cache.appMetadata(environments: environments, clientId: configuration.clientId)?.familyId
        }
        let refreshToken = try CacheAccess.run {
            try dependencies.cache.refreshToken(homeAccountId: lookup.account.homeAccountId, environments: environments,
                                                clientId: configuration.clientId, familyId: family)
        }
        guard let refreshToken else {
            var error = AuthError(.interactionRequired, "no refresh token is cached for this account; sign in interactively")
            error.suberror = "no_refresh_token"
            throw error
        }
        let merged = try Scopes.mergedClaims(claims, capabilities: configuration.clientCapabilities)
        let grant = RefreshTokenGrant(refreshToken: refreshToken.secret, scopes: Scopes.decorated(lookup.scopes), claims: merged)
        let client = TokenEndpointClient(transport: dependencies.transport, clientId: configuration.clientId)
        dependencies.logger.debug("refreshing a token", metadata: ["realm": "\(lookup.realm)"])
        let tokens = try await client.redeem(grant.fields, at: metadata.tokenEndpoint, correlationId: correlationId)
        return try TokenResponseHandler(configuration: configuration, dependencies: dependencies).handle(
            tokens, .init(authority: lookup.authority, metadata: metadata, requestedScopes: lookup.scopes,
                          correlationId: correlationId, knownAccount: lookup.account, grant: nil))
    }
}

/// Runs at most one refresh per key at a time; callers with the same key wait for it and
/// share its outcome (no refresh storms).
actor RefreshCoordinator {
    private var running: [String: Task<TokenResult, any Error>] = [:]

    func run(key: String, _ operation: @escaping @Sendable () async throws -> TokenResult) async throws -> TokenResult {
        if let existing = running[key] { return try await existing.value }
        let task = Task { try await operation() }
        running[key] = task
        defer { running[key] = nil }
        return try await task.value
    }
}
