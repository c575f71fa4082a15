import AuthCore

/// What the token of a Graph call may be for, when the caller limits it (the agent's forward
/// socket: nothing beyond `forwardScopes`). The client checks the token it acquired before
/// sending it anywhere: a broader cached token is replaced by a fresh one for exactly the
/// request's scopes (when ``mayForceRefresh`` allows one), and a token still for more is never
/// sent: ``refusal`` is thrown instead.
public struct GraphTokenCheck: Sendable {
    /// What the token is for beyond what the caller allows (its scopes, or a JWT's `scp` and
    /// `roles`); empty: it may be used.
    public let beyond: @Sendable (TokenResult) -> [String]
    /// Whether a fresh token for these scopes may be asked for now (a forced-refresh budget);
    /// asking records it.
    public let mayForceRefresh: @Sendable ([String]) -> Bool
    /// The error thrown when the token is for more than allowed and no fresh one for exactly
    /// the scopes is (or can be) had.
    public let refusal: @Sendable ([String]) -> any Error

    public init(
        beyond: @escaping @Sendable (TokenResult) -> [String], mayForceRefresh: @escaping @Sendable ([String]) -> Bool,
        refusal: @escaping @Sendable ([String]) -> any Error
    ) {
        self.beyond = beyond
        self.mayForceRefresh = mayForceRefresh
        self.refusal = refusal
    }
}

extension GraphClient {
    /// `token`, when ``GraphRequest/tokenCheck`` allows it; else a fresh token for exactly
    /// `silent`'s scopes (forced refresh), when the check allows one and it is within; else the
    /// check's refusal. Without a check, `token` as it is.
    func checked(_ token: TokenResult, _ silent: SilentRequest, _ check: GraphTokenCheck?, correlationId: String) async throws
        -> TokenResult
    {
        guard let check else { return token }
        var beyond = check.beyond(token)
        guard !beyond.isEmpty else { return token }
        guard !silent.forceRefresh, silent.claims == nil, check.mayForceRefresh(silent.scopes ?? []) else {
            throw check.refusal(beyond)
        }
        var fresh = silent
        fresh.forceRefresh = true
        fresh.account = .homeAccountId(token.account.homeAccountId)
        logger.info("the cached token is for more than this Graph call may use; acquiring one for exactly its scopes")
        let again = try await app.acquireTokenSilently(fresh, correlationId: correlationId)
        beyond = check.beyond(again)
        guard beyond.isEmpty else { throw check.refusal(beyond) }
        return again
    }
}
