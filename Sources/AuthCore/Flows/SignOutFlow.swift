import AuthSeams

/// Removes an account's tokens from the cache, and optionally ends the browser session.
struct SignOutFlow: Sendable {
    let configuration: ClientConfiguration
    let dependencies: AuthDependencies
    let resolver: AuthorityResolver

    /// - Returns: what became of the browser part, `nil` when none was asked for (and the
    ///   device is not shared).
    @discardableResult
    func run(
        _ account: Account, directory: AccountDirectory, fromBrowser: Bool,
        browser: any BrowserLauncher
    ) async throws -> BrowserSignOut? {
        let shared = configuration.sharedDeviceMode
        let victims = shared ? try directory.all() : [account]
        let wasCurrent = try directory.current()?.homeAccountId == account.homeAccountId
        let withBrowser = fromBrowser || shared
        // Read before the tokens go: the end-session request carries the account's ID token.
        let idTokenHint = withBrowser ? try await idToken(of: account) : nil
        for victim in victims {
            let environments = resolver.aliases(of: victim.environment)
            try CacheAccess.run {
                _ = try dependencies.cache.removeAccount(
                    homeAccountId: victim.homeAccountId,
                    environments: environments,
                    clientId: configuration.clientId)
            }
        }
        if shared || wasCurrent {
            try directory.setCurrent(nil)
            try directory.recordSignedOut(account)
        }
        guard withBrowser else { return nil }
        return await endBrowserSession(account, idTokenHint: idTokenHint, browser: browser)
    }

    /// The account's cached ID token (its home tenant's first), for `id_token_hint`.
    private func idToken(of account: Account) async throws -> String? {
        let environments = resolver.aliases(of: account.environment)
        let clientId = configuration.clientId
        return try CacheAccess.run {
            try dependencies.cache.read { document in
                (document.idToken(
                    homeAccountId: account.homeAccountId, environments: environments,
                    realm: account.tenantId, clientId: clientId)
                    ?? document.idToken(
                        homeAccountId: account.homeAccountId, environments: environments,
                        realm: nil, clientId: clientId))?.secret
            }
        }
    }

    /// Opens the end-session endpoint with OIDC RP-Initiated Logout 1.0's parameters
    /// (`id_token_hint`, `client_id`, `post_logout_redirect_uri` when configured) and
    /// Microsoft's `logout_hint`. A failure is logged, not thrown (the tokens are gone).
    private func endBrowserSession(_ account: Account, idTokenHint: String?, browser: any BrowserLauncher) async -> BrowserSignOut {
        do {
            let metadata = try await resolver.resolve(configuration.authority).metadata
            guard let endpoint = metadata.endSessionEndpoint else { return .notSupported }
            var query: [(String, String)] = []
            if let idTokenHint { query.append(("id_token_hint", idTokenHint)) }
            query.append(("client_id", configuration.clientId))
            if let redirect = configuration.postLogoutRedirectURI { query.append(("post_logout_redirect_uri", redirect)) }
            if !account.username.isEmpty { query.append(("logout_hint", account.username)) }
            let separator = endpoint.contains("?") ? "&" : "?"
            try await browser.open(endpoint + separator + FormEncoding.query(query))
            return .opened
        } catch {
            let reason = (error as? AuthError)?.message ?? (error as? BrowserError)?.description ?? "cancelled"
            dependencies.logger.warning("could not end the browser session", metadata: ["reason": "\(reason)"])
            return .failed
        }
    }
}
