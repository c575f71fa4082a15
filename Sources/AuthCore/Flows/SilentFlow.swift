import JSON
import POSIXSupport
import TokenCache

/// A token without UI: a valid cached access token (5-minute margin), else the refresh
/// token.
///
/// Offline first: the cached token is looked up with what is known without the network (the
/// authority's aliases and realm, built in or kept from an earlier discovery), in one read of
/// the cache, so a valid token costs no request and is served with the service unreachable.
/// Discovery happens only when a refresh needs the token endpoint. Identical concurrent
/// requests share one refresh (``RefreshCoordinator``), and processes sharing the cache take
/// turns on it (``RefreshLock``): the ones that waited find the new token in the cache.
struct SilentFlow: Sendable {
    let configuration: ClientConfiguration
    let dependencies: AuthDependencies
    let resolver: AuthorityResolver
    let coordinator: RefreshCoordinator
    /// What earlier requests found in the same version of the cache.
    let memo: SilentMemo

    /// How long a process waits for another one's refresh of the same token.
    static let refreshWait: Duration = .seconds(30)

    func run(_ request: SilentRequest, correlationId: String) async throws -> TokenResult {
        let authority = try configuration.authority(for: request.authority)
        let scopes = Scopes.requested(request.scopes, defaults: configuration.defaultScopes)
        let useCache = !request.forceRefresh && request.claims == nil
        let found = try find(request.account, authority: authority, scopes: scopes, binding: request.binding, useCache: useCache)
        let view = found.view
        let cached = found.cached
        guard let account = found.account else { throw Self.noAccount(request.account) }
        if let cached, !cached.token.needsRefresh(at: dependencies.clock.now()) { return cached.result(correlationId) }
        let key = [
            configuration.clientId, account.homeAccountId, authority.url,
            scopes.map { $0.lowercased() }.sorted().joined(separator: " "),
            request.claims ?? "", request.forceRefresh ? "force" : "", request.binding.map { $0.tokenType + ":" + $0.keyId } ?? "",
        ].joined(separator: "|").lowercased()
        return try await coordinator.run(key: key) {
            try await dependencies.cache.refreshLock.withLock(key: key, timeout: Self.refreshWait) {
                try await refreshUnlessDone(
                    authority: authority, view: view, scopes: scopes, account: account,
                    request: request, correlationId: correlationId)
            }
        }
    }

    /// With the refresh to ourselves: a token another request (or process) just got is taken
    /// from the cache; else the refresh token is redeemed. A failure that is not
    /// `interactionRequired` still returns a cached token that is valid.
    private func refreshUnlessDone(
        authority: Authority, view: CacheView, scopes: [String], account: Account,
        request: SilentRequest, correlationId: String
    ) async throws -> TokenResult {
        let useCache = !request.forceRefresh && request.claims == nil
        var lookup = Lookup(
            authority: authority, realms: realms(authority, view.metadataRealm, account),
            environments: view.environments, scopes: scopes, account: account, binding: request.binding)
        func cached() throws -> CachedResult? {
            guard useCache else { return nil }
            return try CacheAccess.run { try dependencies.cache.read { cachedToken(lookup, in: $0) } }
        }
        if let fresh = try cached(), !fresh.token.needsRefresh(at: dependencies.clock.now()) { return fresh.result(correlationId) }
        do {
            let resolved = try await resolver.resolve(authority)
            lookup = Lookup(
                authority: resolved.authority, realms: realms(authority, resolved.realm, account),
                environments: resolved.environments, scopes: scopes, account: account, binding: request.binding)
            if let fresh = try cached(), !fresh.token.needsRefresh(at: dependencies.clock.now()) { return fresh.result(correlationId) }
            let result = try await refresh(lookup, metadata: resolved.metadata, claims: request.claims, correlationId: correlationId)
            Self.noteRefresh(failure: nil, account: account, clientId: configuration.clientId, dependencies: dependencies)
            return result
        } catch let error as AuthError {
            Self.noteRefresh(failure: error, account: account, clientId: configuration.clientId, dependencies: dependencies)
            // Proactive refresh failed (network down, service error): a still-valid token is
            // better than an error.
            if error.kind != .interactionRequired, let valid = try cached() { return valid.result(correlationId) }
            throw error
        }
    }

    /// Keeps the last failed refresh beside the cache (`status` shows it), or forgets it after
    /// a refresh that worked. Best effort: a record that cannot be written changes no answer.
    /// (An app's exchange is noted the same way, `account` the app itself.)
    /// `refreshKey`: the refresh lock's key, with the real time in milliseconds, so a process
    /// that waited on that lock takes this failure as its answer (``AppTokenFlow``).
    static func noteRefresh(
        failure: AuthError?, account: Account, clientId: String, dependencies: AuthDependencies, refreshKey: String? = nil
    ) {
        let record: JSONObject? = failure.map { error in
            var record: JSONObject = [
                "clientId": .string(clientId), "at": .int(dependencies.clock.now()), "username": .string(account.username),
                "homeAccountId": .string(account.homeAccountId), "error": .string(error.kind.rawValue),
                "message": .string(String(error.message.prefix(500))),
            ]
            if let codes = error.errorCodes { record["errorCodes"] = .array(codes.map { .int(Int64($0)) }) }
            if let refreshKey {
                record["refreshKey"] = .string(refreshKey)
                record["atMilliseconds"] = .int(POSIX.realTimeMilliseconds())
            }
            return record
        }
        dependencies.cache.refreshErrors.write(record)
    }

    struct Lookup {
        let authority: Authority
        /// The cache realms a token may be under, best first.
        let realms: [String]
        let environments: [String]
        let scopes: [String]
        let account: Account
        /// The key a bound token (`ssh-cert`, `pop`) is for.
        var binding: TokenBinding? = nil
        /// The realm tokens from this authority are saved under.
        var realm: String { realms.first ?? authority.tenant }
    }

    /// The account a request names and its valid cached token, from one read of the cache.
    struct Found: Sendable {
        var view: CacheView
        var account: Account?
        var cached: CachedResult?
    }

    /// Reads the cache once (one `stat` when it did not change; a load when it did): the
    /// authority's view, the account, and its valid cached token. Never suspends: what it needs
    /// of the authority is known without the network.
    func find(
        _ reference: AccountReference?, authority: Authority, scopes: [String], binding: TokenBinding? = nil, useCache: Bool
    ) throws -> Found {
        let document = try CacheAccess.run { try dependencies.cache.snapshot() }
        let memoKey = SilentMemo.key(reference, authority: authority, scopes: scopes, binding: binding)
        if useCache, let found = memo.lookup(memoKey, stamp: document.stamp)?.found, isStillUsable(found) {
            return found
        }
        let view = try resolver.cacheView(authority, in: document)
        let directory = AccountDirectory(configuration: configuration, cache: dependencies.cache, environments: view.environments)
        guard let account = try directory.resolve(reference, in: document) else { return Found(view: view) }
        let lookup = Lookup(
            authority: authority, realms: realms(authority, view.metadataRealm, account),
            environments: view.environments, scopes: scopes, account: account, binding: binding)
        let found = Found(view: view, account: account, cached: useCache ? cachedToken(lookup, in: document) : nil)
        if useCache { memo.store(found, forKey: memoKey, stamp: document.stamp) }
        return found
    }

    /// Whether a remembered answer may be reused: no token, or a token not yet expired.
    private func isStillUsable(_ found: Found) -> Bool {
        guard let cached = found.cached else { return true }
        return !SSHKeyBinding.isDue(cached.token, at: dependencies.clock.now())
    }

    /// A cached token (valid when found) and the result it makes.
    struct CachedResult: Sendable {
        let token: CachedAccessToken
        let result: @Sendable (String) -> TokenResult
    }

    /// The realms to look in: the metadata's (when known), the authority's tenant and, for
    /// `common`/`organizations`/`consumers`, the account's home tenant.
    private func realms(_ authority: Authority, _ metadataRealm: String?, _ account: Account) -> [String] {
        var realms = [metadataRealm, authority.tenant].compactMap { $0 }
        if authority.isMultiTenant, let home = account.homeAccountId.utf8.split(separator: UInt8(ascii: ".")).last.map(Substring.init) {
            realms.append(String(home))
        }
        var seen = Set<String>()
        return realms.filter { seen.insert($0.lowercased()).inserted }
    }

    private func cachedToken(_ lookup: Lookup, in document: CacheDocument) -> CachedResult? {
        let now = dependencies.clock.now()
        let home = lookup.account.homeAccountId
        let scopes = ScopeSet(lookup.scopes)
        for realm in lookup.realms {
            guard
                let token = document.accessToken(
                    homeAccountId: home, environments: lookup.environments, realm: realm,
                    clientId: configuration.clientId, scopes: scopes, keyId: lookup.binding?.keyId),
                !SSHKeyBinding.isDue(token, at: now),
                TokenBinding.matches(lookup.binding, tokenType: token.tokenType)
            else { continue }
            let idToken = document.idToken(
                homeAccountId: home, environments: lookup.environments,
                realm: token.realm, clientId: configuration.clientId)
            let account = lookup.account
            let authority = lookup.authority.url
            let granted = token.scopes.resourceScopes
            let result: @Sendable (String) -> TokenResult = { correlationId in
                TokenResult(
                    accessToken: token.secret, tokenType: TokenResponse.normalized(tokenType: token.tokenType),
                    expiresOn: token.expiresOn,
                    scopes: granted, account: account, idToken: idToken?.secret, tenantId: account.tenantId,
                    authority: authority, correlationId: correlationId, fromCache: true)
            }
            return CachedResult(token: token, result: result)
        }
        return nil
    }

    /// `interactionRequired` (no account) or `accountNotFound` (the named one is not cached).
    static func noAccount(_ reference: AccountReference?) -> AuthError {
        if let reference { return PublicClientApplication.accountNotFound(reference) }
        var error = AuthError(.interactionRequired, "no account is signed in; call acquireToken")
        error.suberror = "no_account"
        return error
    }

    private func refresh(_ lookup: Lookup, metadata: OpenIDMetadata, claims: String?, correlationId: String) async throws -> TokenResult {
        let environments = lookup.environments
        let clientId = configuration.clientId
        let candidates = try CacheAccess.run {
            try dependencies.cache.read {
                Self.candidates(
                    $0.refreshTokensToTry(
                        homeAccountId: lookup.account.homeAccountId, environments: environments,
                        clientId: clientId), clientId: clientId)
            }
        }
        guard !candidates.isEmpty else {
            var error = AuthError(.interactionRequired, "no refresh token is cached for this account; sign in interactively")
            error.suberror = "no_refresh_token"
            throw error
        }
        let merged = try Scopes.mergedClaims(claims, capabilities: configuration.clientCapabilities)
        let client = TokenEndpointClient(
            transport: dependencies.transport, clientId: configuration.clientId,
            clock: dependencies.clock, logger: dependencies.logger)
        dependencies.logger.debug("refreshing a token", metadata: ["realm": "\(lookup.realm)"])
        var firstFailure: AuthError?
        for refreshToken in candidates {
            let grant = RefreshTokenGrant(refreshToken: refreshToken.secret, scopes: Scopes.decorated(lookup.scopes), claims: merged)
            do {
                let tokens = try await client.redeem(
                    grant.fields, at: metadata.tokenEndpoint, correlationId: correlationId, binding: lookup.binding,
                    headers: TokenEndpointClient.anchorMailbox(homeAccountId: lookup.account.homeAccountId))
                return try await handle(tokens, lookup, metadata: metadata, correlationId: correlationId)
            } catch let error as AuthError where error.oauthError == "invalid_grant" {
                // MSAL's FOCI rule: the client's own token, then the family's; a service that
                // says the client is not in the family (client_mismatch) ends the search.
                firstFailure = firstFailure ?? error
                if error.suberror == "client_mismatch" { break }
            }
        }
        throw firstFailure ?? AuthError(.interactionRequired, "no refresh token was accepted; sign in interactively")
    }

    /// The client's newest own refresh token, then the newest family token (FOCI).
    static func candidates(_ tokens: [CachedRefreshToken], clientId: String) -> [CachedRefreshToken] {
        let own = tokens.first { $0.clientId.lowercased() == clientId.lowercased() }
        let family = tokens.first { $0.clientId.lowercased() != clientId.lowercased() }
        return [own, family].compactMap { $0 }
    }

    private func handle(
        _ tokens: TokenResponse, _ lookup: Lookup, metadata: OpenIDMetadata,
        correlationId: String
    ) async throws -> TokenResult {
        var result = try await TokenResponseHandler(configuration: configuration, dependencies: dependencies, resolver: resolver).handle(
            tokens,
            .init(
                authority: lookup.authority, metadata: metadata, requestedScopes: lookup.scopes,
                correlationId: correlationId, knownAccount: lookup.account, grant: nil, binding: lookup.binding))
        if result.idToken == nil { result.idToken = try cachedIdToken(lookup) }
        return result
    }

    /// The account's cached ID token: a refresh answered without one keeps it in the result,
    /// as MSAL does.
    private func cachedIdToken(_ lookup: Lookup) throws -> String? {
        let clientId = configuration.clientId
        return try CacheAccess.run {
            try dependencies.cache.read { document in
                lookup.realms.lazy.compactMap {
                    document.idToken(
                        homeAccountId: lookup.account.homeAccountId, environments: lookup.environments,
                        realm: $0, clientId: clientId)?.secret
                }.first
            }
        }
    }
}
