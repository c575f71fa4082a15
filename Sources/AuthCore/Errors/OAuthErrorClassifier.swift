/// The one rule that turns an OAuth error answer, from any endpoint, into what it means:
/// an ``AuthError/Kind``, or (device code polling only) "keep polling" / "slow down".
///
/// Like AppAuth's `OIDErrorUtilities` or MSAL's one error converter, every endpoint goes
/// through the same table ``rules``: the token endpoint (authorization code, refresh, device
/// code polling), the authorize redirect, OpenID discovery and instance discovery. The rows are
/// read in order and the first that applies wins, so the precedence is written down once:
/// 1. Discovery answers are about the authority, whatever their body says.
/// 2. Specific service codes beat generic OAuth errors: AADSTS50129 (device registration),
///    then B2C's AADB2C90118 (forgot password), then a cancellation.
/// 3. `access_denied` is the user (or the service on their behalf) refusing, at every endpoint
///    (RFC 6749 §4.1.2.1, RFC 8628 §3.5): ``AuthError/Kind/userCanceled``.
/// 4. Device code polling's own answers (a Conditional Access refusal of the flow before a
///    cancellation), then the generic OAuth errors, then `serverError`.
///
/// Usage:
/// ```swift
/// let answer = OAuthErrorAnswer(error: "invalid_grant", suberror: "basic_action")
/// OAuthErrorClassifier.meaning(of: answer, at: .refresh)  // .fails(.interactionRequired)
/// ```
public enum OAuthErrorClassifier {
    /// Errors that mean "the user must interact" (MSAL's interactionRequired).
    static let interactionErrors: Set<String> = ["invalid_grant", "interaction_required", "consent_required", "login_required"]
    /// Errors that mean the application is registered or configured wrongly.
    static let configurationErrors: Set<String> = ["invalid_client", "unauthorized_client", "invalid_request", "invalid_scope"]
    /// Errors that mean the user refused or ended the sign-in.
    static let refusals: Set<String> = ["access_denied", "authorization_declined"]
    /// Device code polling: the code expired before the user signed in.
    static let expiries: Set<String> = ["expired_token", "code_expired"]
    /// Service codes by which Conditional Access refuses the device code flow: AADSTS53003
    /// (blocked by a policy) and AADSTS50005 (a platform the policy does not allow).
    public static let deviceCodeRefusals = [53003, 50005]

    /// One row of the table: when it applies, and what the answer then means.
    struct Rule: Sendable {
        /// What the row is about, in plain words (shown by the tests).
        let about: String
        let applies: @Sendable (OAuthErrorAnswer, OAuthEndpoint) -> Bool
        let meaning: OAuthErrorMeaning
    }

    /// The table, in precedence order (see the type's documentation).
    static let rules: [Rule] = [
        Rule(
            about: "OpenID discovery answered 400/404: the service does not know the authority",
            applies: { $1 == .openIDDiscovery && [400, 404].contains($0.httpStatus ?? 0) }, meaning: .fails(.invalidAuthority)),
        Rule(
            about: "any other OpenID discovery failure is the service failing",
            applies: { $1 == .openIDDiscovery }, meaning: .fails(.serverError)),
        Rule(
            about: "instance discovery does not know the host",
            applies: { $1 == .instanceDiscovery && $0.error == "invalid_instance" }, meaning: .fails(.authorityNotTrusted)),
        Rule(
            about: "any other instance discovery failure is the service failing",
            applies: { $1 == .instanceDiscovery }, meaning: .fails(.serverError)),
        Rule(
            about: "a refresh token refused by an HTTP 400 without an OAuth error",
            applies: { $1 == .refresh && $0.error == nil && $0.httpStatus == 400 }, meaning: .fails(.interactionRequired)),
        Rule(
            about: "AADSTS50129: the device must be registered",
            applies: { a, _ in a.has(serviceCode: 50129) }, meaning: .fails(.workplaceJoinRequired)),
        Rule(
            about: "AADB2C90118: the user forgot the password",
            applies: { a, _ in a.description.contains("AADB2C90118") }, meaning: .fails(.passwordResetRequired)),
        Rule(
            about: "device code polling: Conditional Access refuses the device code flow (AADSTS53003, AADSTS50005)",
            applies: { a, endpoint in endpoint == .deviceCodePolling && deviceCodeRefusals.contains { a.has(serviceCode: $0) } },
            meaning: .fails(.deviceCodeBlocked)),
        Rule(
            about: "the user cancelled or declined (error_subcode cancel, AADB2C90091, access_denied, authorization_declined)",
            applies: { a, _ in a.suberror == "cancel" || a.description.contains("AADB2C90091") || refusals.contains(a.error ?? "") },
            meaning: .fails(.userCanceled)),
        Rule(
            about: "device code polling: the user has not signed in yet",
            applies: { $1 == .deviceCodePolling && $0.error == "authorization_pending" }, meaning: .keepPolling),
        Rule(
            about: "device code polling: poll less often",
            applies: { $1 == .deviceCodePolling && $0.error == "slow_down" }, meaning: .slowDown),
        Rule(
            about: "device code polling: the code expired",
            applies: { $1 == .deviceCodePolling && expiries.contains($0.error ?? "") }, meaning: .fails(.timeout)),
        Rule(
            about: "interaction needed, but the service requires protection policies",
            applies: { a, _ in interactionErrors.contains(a.error ?? "") && a.suberror == "protection_policy_required" },
            meaning: .fails(.serverProtectionPoliciesRequired)),
        Rule(
            about: "the user must interact (invalid_grant, interaction_required, consent_required, login_required)",
            applies: { a, _ in interactionErrors.contains(a.error ?? "") }, meaning: .fails(.interactionRequired)),
        Rule(
            about: "the application is registered or configured wrongly",
            applies: { a, _ in configurationErrors.contains(a.error ?? "") }, meaning: .fails(.invalidConfiguration)),
    ]

    /// What `answer` from `endpoint` means: the first row of ``rules`` that applies, else
    /// `serverError`.
    public static func meaning(of answer: OAuthErrorAnswer, at endpoint: OAuthEndpoint) -> OAuthErrorMeaning {
        rules.first { $0.applies(answer, endpoint) }?.meaning ?? .fails(.serverError)
    }

    /// The kind of error `answer` from `endpoint` is (polling answers, met anywhere else than
    /// while polling, are `serverError`).
    public static func kind(of answer: OAuthErrorAnswer, at endpoint: OAuthEndpoint) -> AuthError.Kind {
        meaning(of: answer, at: endpoint).kind
    }
}
