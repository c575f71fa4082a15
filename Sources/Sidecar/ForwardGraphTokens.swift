import Graph

/// The forward socket's rule for `callGraph`'s token, applied by the Graph client before the
/// call (``GraphTokenCheck``): the token is checked as an `acquireTokenSilent` reply is
/// (``ForwardReply/beyondScopes(_:_:)``: its scopes, a JWT's `scp` and `roles`); a broader cached
/// token is replaced by a fresh one for exactly the request's scopes, within the session's
/// ``ForwardRefreshBudget``; a token still for more is never sent to Graph: -51014
/// `forwardTokenRefused`. (The reply stage sees only Graph's answer, after the call was made.)
public struct ForwardGraphTokens: Sendable {
    public let scopes: ForwardScopes
    public let budget: ForwardRefreshBudget

    public init(scopes: ForwardScopes, budget: ForwardRefreshBudget) {
        self.scopes = scopes
        self.budget = budget
    }

    /// The check the Graph client applies.
    var check: GraphTokenCheck {
        GraphTokenCheck(
            beyond: { [scopes] in ForwardReply.beyondScopes(AuthJSON.tokenResult($0), scopes) },
            mayForceRefresh: { [budget] in budget.take($0) },
            refusal: { ForwardReply.tokenRefused($0) })
    }
}
