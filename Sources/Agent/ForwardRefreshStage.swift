import JSON
import Sidecar

/// The forward session's forced-refresh budget (``ForwardRefreshBudget``) as its stages apply
/// it to `acquireTokenSilent`: past the budget a `forceRefresh` request is answered from the
/// token the last forced refresh brought (its `forceRefresh` dropped at the request stage), and
/// the reply stage asks for a fresh token instead of a broader cached one only within the
/// budget. `callGraph` takes from the same budget (``ForwardGraphTokens``).
struct ForwardRefreshStage: Sendable {
    let budget: ForwardRefreshBudget

    /// The request stage: `params` (scopes explicit), without `forceRefresh` when the budget of
    /// its token is spent.
    func admitted(_ params: JSONValue?) -> JSONValue? {
        guard params?["forceRefresh"]?.boolValue == true, budget.isSpent(Self.scopes(params)), case .object(var members)? = params
        else { return params }
        members["forceRefresh"] = nil
        return .object(members)
    }

    /// A forced refresh for `params` runs (the consent stage, before the engine: a failed one
    /// counts too), or came back (the reply stage, for the reply stage's own ask): the budget of
    /// its token is spent.
    func spend(_ params: JSONValue?) {
        if params?["forceRefresh"]?.boolValue == true { budget.spend(Self.scopes(params)) }
    }

    /// Whether the reply stage may ask for a fresh token for `params`'s scopes: the budget is not
    /// spent (the fresh answer spends it, ``spend(_:)``; the fast path's reply stage may
    /// decide this before the task decides it again, so deciding takes nothing).
    func mayAskAgain(_ params: JSONValue?) -> Bool { !budget.isSpent(Self.scopes(params)) }

    private static func scopes(_ params: JSONValue?) -> [String] {
        params?["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}
