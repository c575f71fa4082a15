import HTTP
import Loopback

/// Removes an account's tokens from the cache, and optionally ends the browser session.
struct SignOutFlow: Sendable {
    let configuration: ClientConfiguration
    let dependencies: AuthDependencies
    let resolver: AuthorityResolver

    /// - Returns: whether the browser was asked to end the session.
    @discardableResult
    func run(_ account: Account, directory: AccountDirectory, fromBrowser: Bool, browser: any BrowserLauncher) async throws -> Bool {
        let shared = configuration.sharedDeviceMode
        let victims = shared ? try directory.all() : [account]
        let wasCurrent = try directory.current()?.homeAccountId == account.homeAccountId
        for victim in victims {
            let environments = await resolver.aliases(of: victim.environment)
            try CacheAccess.run {
                _ = try dependencies.cache.removeAccount(homeAccountId: victim.homeAccountId,
                                                         environments: environments,
                                                         clientId: configuration.clientId)
            }
        }
        if shared || wasCurrent {
            try directory.setCurrent(nil)
            try directory.recordSignedOut(account)
        }
        guard fromBrowser || shared else { return false }
        return await endBrowserSession(hint: account.username, browser: browser)
    }

    /// Opens the end-session endpoint; a failure is logged, not thrown (the tokens are gone).
    private func endBrowserSession(hint: String, browser: any BrowserLauncher) async -> Bool {
        do {
            let metadata = try await resolver.resolve(configuration.authority).metadata
            guard let endpoint = metadata.endSessionEndpoint else { return false }
            let separator = endpoint.contains("?") ? "&" : "?"
            try await browser.open(endpoint + separator + FormEncoding.query([("logout_hint", hint)]))
            return true
        } catch {
            dependencies.logger.warning("could not end the browser session", metadata: ["error": "\(error)"])
            return false
        }
    }
}
