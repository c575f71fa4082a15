import JSON
import TokenCache

/// Turns a token endpoint answer into a cached record and a ``TokenResult``.
struct TokenResponseHandler: Sendable {
    let configuration: ClientConfiguration
    let dependencies: AuthDependencies
    let resolver: AuthorityResolver

    struct Context {
        var authority: Authority
        var metadata: OpenIDMetadata
        var requestedScopes: [String]
        var correlationId: String
        /// The nonce sent with the authorization request (checked against the ID token).
        var nonce: String?
        /// The account a refresh was for (when the response carries no ID token).
        var knownAccount: Account?
        /// `authorization_code`, `device_code`, or nil for a refresh (no account creation).
        var grant: String?
        /// The key of a bound answer (`ssh-cert`, `pop`: cached under its id).
        var binding: TokenBinding? = nil
    }

    func handle(_ response: TokenResponse, _ context: Context) async throws -> TokenResult {
        let idToken = try response.idToken.map { (raw: String) throws(AuthError) in try IDToken(raw: raw) }
        if let idToken {
            try await IDTokenValidator(
                clientId: configuration.clientId, authority: context.authority, metadata: context.metadata,
                environments: resolver.environments(of: context.authority), now: dependencies.clock.now(),
                nonce: context.nonce, signingKeys: resolver.signingKeys
            ).validate(idToken)
        }
        let account = try account(from: response, idToken: idToken, context: context)
        let now = dependencies.clock.now()
        let granted = Scopes.granted(response.scope, requested: context.requestedScopes, clientId: configuration.clientId)
        let record = TokenResponseRecord(
            clientId: configuration.clientId, environment: context.authority.cacheEnvironment,
            realm: context.metadata.realm ?? context.authority.tenant,
            homeAccountId: account.homeAccountId, localAccountId: account.localAccountId,
            username: account.username, name: account.name, clientInfo: response.clientInfo,
            accountSource: context.grant, createsAccount: context.grant != nil, scopes: granted,
            accessToken: response.accessToken, tokenType: response.tokenType, keyId: context.binding?.keyId, cachedAt: now,
            expiresOn: now + response.expiresIn, extendedExpiresOn: response.extExpiresIn.map { now + $0 },
            refreshOn: response.refreshIn.map { now + $0 }, refreshToken: response.refreshToken,
            idToken: response.idToken, familyId: response.familyId)
        try CacheAccess.run { try dependencies.cache.save(record) }
        let result = TokenResult(
            accessToken: response.accessToken, tokenType: response.tokenType, expiresOn: now + response.expiresIn,
            scopes: ScopeSet(granted).resourceScopes, account: account,
            idToken: response.idToken, tenantId: account.tenantId, authority: context.authority.url,
            correlationId: context.correlationId, fromCache: false)
        let declined = Scopes.declined(requested: context.requestedScopes, granted: granted)
        if response.scope != nil, !declined.isEmpty {
            var error = AuthError(.serverDeclinedScopes, "the service declined scopes: \(declined.joined(separator: " "))")
            error.grantedScopes = result.scopes
            error.declinedScopes = declined
            error.correlationId = context.correlationId
            throw error
        }
        return result
    }

    private func account(from response: TokenResponse, idToken: IDToken?, context: Context) throws -> Account {
        let clientInfo = try response.clientInfo.map { (raw: String) throws(AuthError) in try ClientInfo(raw: raw) }
        if let idToken {
            let homeAccountId =
                clientInfo?.homeAccountId
                ?? context.knownAccount?.homeAccountId
                ?? idToken.objectId.map { "\($0).\(idToken.tenantId ?? context.authority.tenant)" }
            guard let homeAccountId, let localId = idToken.objectId else {
                throw AuthError.malformed("neither client_info nor the ID token identify the account")
            }
            return Account(
                homeAccountId: homeAccountId, localAccountId: localId, environment: context.authority.cacheEnvironment,
                tenantId: idToken.tenantId ?? context.authority.tenant, username: idToken.username ?? "",
                name: idToken.name, idTokenClaims: IDTokenClaims(idToken.claims))
        }
        guard let known = context.knownAccount else {
            throw AuthError.malformed("the token response carries no ID token for a new sign-in")
        }
        return known
    }
}

/// Runs cache operations, reporting cache failures as ``AuthError``.
enum CacheAccess {
    static func run<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as TokenCacheError {
            throw AuthError(.cacheUnavailable, error.description)
        }
    }
}
