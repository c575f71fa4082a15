import AuthSeams
import JSON
import Testing

@testable import AuthCore

/// Every row of ``OAuthErrorClassifier/rules``, and the precedence between rows that both apply.
@Suite struct OAuthErrorClassifierTests {
    typealias Row = (answer: OAuthErrorAnswer, endpoint: OAuthEndpoint, meaning: OAuthErrorMeaning)

    static let rows: [Row] = [
        // Discovery answers are about the authority, whatever their body says.
        (.init(error: "invalid_tenant", description: "AADSTS90002: Tenant not found", httpStatus: 400), .openIDDiscovery, .fails(.invalidAuthority)),
        (.init(error: nil, httpStatus: 404), .openIDDiscovery, .fails(.invalidAuthority)),
        (.init(error: "invalid_grant", errorCodes: [50129], httpStatus: 400), .openIDDiscovery, .fails(.invalidAuthority)),
        (.init(error: "server_error", httpStatus: 503), .openIDDiscovery, .fails(.serverError)),
        (.init(error: "invalid_client", httpStatus: 500), .openIDDiscovery, .fails(.serverError)),
        (.init(error: "invalid_instance", httpStatus: 400), .instanceDiscovery, .fails(.authorityNotTrusted)),
        (.init(error: "access_denied", httpStatus: 400), .instanceDiscovery, .fails(.serverError)),
        (.init(error: nil, httpStatus: 500), .instanceDiscovery, .fails(.serverError)),
        // A refresh token refused without saying why.
        (.init(error: nil, httpStatus: 400), .refresh, .fails(.interactionRequired)),
        (.init(error: nil, httpStatus: 400), .token, .fails(.serverError)),
        (.init(error: nil, httpStatus: 401), .refresh, .fails(.serverError)),
        // AADSTS50129 first, at every endpoint, from error_codes or the description.
        (.init(error: "invalid_grant", errorCodes: [50129]), .refresh, .fails(.workplaceJoinRequired)),
        (.init(error: "interaction_required", description: "AADSTS50129: register the device"), .authorizeRedirect, .fails(.workplaceJoinRequired)),
        (
            .init(error: "access_denied", description: "AADSTS50129: register the device", suberror: "cancel"), .authorizeRedirect,
            .fails(.workplaceJoinRequired)
        ),
        // B2C's forgot password before a cancellation.
        (.init(error: "access_denied", description: "AADB2C90118: forgot password"), .authorizeRedirect, .fails(.passwordResetRequired)),
        (.init(error: "access_denied", description: "AADB2C90118: forgot password"), .token, .fails(.passwordResetRequired)),
        // The user refusing, at every endpoint.
        (.init(error: "access_denied", description: "AADSTS65004: declined"), .authorizeRedirect, .fails(.userCanceled)),
        (.init(error: "access_denied"), .token, .fails(.userCanceled)),
        (.init(error: "access_denied"), .deviceCodePolling, .fails(.userCanceled)),
        (.init(error: "authorization_declined"), .deviceCodePolling, .fails(.userCanceled)),
        (.init(error: "server_error", suberror: "cancel"), .authorizeRedirect, .fails(.userCanceled)),
        (.init(error: "invalid_request", description: "AADB2C90091: the user cancelled"), .authorizeRedirect, .fails(.userCanceled)),
        // Conditional Access refusing the device code flow, only while polling (before a cancellation).
        (.init(error: "invalid_grant", description: "AADSTS53003: blocked", errorCodes: [53003]), .deviceCodePolling, .fails(.deviceCodeBlocked)),
        (.init(error: "access_denied", description: "AADSTS50005: platform not allowed"), .deviceCodePolling, .fails(.deviceCodeBlocked)),
        (.init(error: "invalid_grant", errorCodes: [53003]), .refresh, .fails(.interactionRequired)),
        // Device code polling's own answers, only while polling.
        (.init(error: "authorization_pending"), .deviceCodePolling, .keepPolling),
        (.init(error: "slow_down"), .deviceCodePolling, .slowDown),
        (.init(error: "expired_token"), .deviceCodePolling, .fails(.timeout)),
        (.init(error: "code_expired"), .deviceCodePolling, .fails(.timeout)),
        (.init(error: "authorization_pending"), .token, .fails(.serverError)),
        (.init(error: "slow_down"), .refresh, .fails(.serverError)),
        (.init(error: "expired_token"), .token, .fails(.serverError)),
        // Generic OAuth errors.
        (.init(error: "invalid_grant", suberror: "protection_policy_required"), .refresh, .fails(.serverProtectionPoliciesRequired)),
        (.init(error: "interaction_required", suberror: "protection_policy_required"), .token, .fails(.serverProtectionPoliciesRequired)),
        (.init(error: "invalid_grant", description: "AADSTS700082: expired"), .refresh, .fails(.interactionRequired)),
        (.init(error: "interaction_required", suberror: "basic_action"), .token, .fails(.interactionRequired)),
        (.init(error: "consent_required"), .authorizeRedirect, .fails(.interactionRequired)),
        (.init(error: "login_required"), .authorizeRedirect, .fails(.interactionRequired)),
        (.init(error: "invalid_grant"), .deviceCodePolling, .fails(.interactionRequired)),
        (.init(error: "invalid_client"), .token, .fails(.invalidConfiguration)),
        (.init(error: "unauthorized_client"), .authorizeRedirect, .fails(.invalidConfiguration)),
        (.init(error: "invalid_request"), .refresh, .fails(.invalidConfiguration)),
        (.init(error: "invalid_scope"), .authorizeRedirect, .fails(.invalidConfiguration)),
        // Everything else is the service failing.
        (.init(error: "temporarily_unavailable"), .token, .fails(.serverError)),
        (.init(error: "server_error"), .authorizeRedirect, .fails(.serverError)),
        (.init(error: nil, httpStatus: 503), .deviceCodePolling, .fails(.serverError)),
    ]

    @Test(arguments: rows.indices)
    func classifies(_ index: Int) {
        let row = Self.rows[index]
        #expect(
            OAuthErrorClassifier.meaning(of: row.answer, at: row.endpoint) == row.meaning,
            "\(row.answer) at \(row.endpoint)")
    }

    @Test func everyRuleDecidesAtLeastOneRow() {
        for rule in OAuthErrorClassifier.rules {
            let decided = Self.rows.contains { row in
                OAuthErrorClassifier.rules.first { $0.applies(row.answer, row.endpoint) }?.about == rule.about
            }
            #expect(decided, "no test row is decided by: \(rule.about)")
        }
    }

    @Test func theEndpointFollowsTheGrantType() {
        #expect(OAuthEndpoint.token(grantType: "refresh_token") == .refresh)
        #expect(OAuthEndpoint.token(grantType: "urn:ietf:params:oauth:grant-type:device_code") == .deviceCodePolling)
        #expect(OAuthEndpoint.token(grantType: "authorization_code") == .token)
        #expect(OAuthEndpoint.token(grantType: nil) == .token)
    }

    @Test func theRedirectAndTheTokenEndpointAgree() throws {
        for (error, description) in [
            ("access_denied", "AADSTS50129: register"), ("access_denied", "AADSTS65004: declined"),
            ("interaction_required", "AADSTS50129: register"), ("invalid_scope", ""),
        ] {
            let redirect = try #require(
                InteractiveFlow.error(
                    in: AuthorizationResponse(parameters: ["error": error, "error_description": description]), correlationId: "c"))
            let json = JSONValue.object(["error": .string(error), "error_description": .string(description)])
            let token = OAuthErrorResponse.authError(json: json, httpStatus: 400, retryAfter: nil)
            #expect(redirect.kind == token.kind, "\(error) \(description)")
        }
    }
}
