import AuthSeams
import JSON

/// What a discovery document that was not served means: the service's own words kept.
enum DiscoveryFailure {
    /// The error for a non-200 answer to OpenID discovery at `authority`.
    ///
    /// HTTP 400 or 404 means the service does not know the authority (Microsoft's unknown
    /// tenant is 400 `invalid_tenant`, AADSTS90002): ``AuthError/Kind/invalidAuthority``, with
    /// the service's `error`, description and codes. Anything else (5xx, 429) is the service
    /// failing: `serverError`, with its OAuth details when it sent some.
    static func error(_ response: HTTPResponse, authority: Authority) -> AuthError {
        let json = try? JSONValue.parse(response.body)
        var error: AuthError
        if let json, json["error"]?.stringValue != nil {
            error = OAuthErrorResponse.authError(
                json: json, httpStatus: response.status,
                retryAfter: TokenEndpointClient.retryAfter(response), endpoint: .openIDDiscovery)
        } else {
            error = AuthError(
                OAuthErrorClassifier.kind(
                    of: OAuthErrorAnswer(error: nil, httpStatus: response.status),
                    at: .openIDDiscovery),
                "OpenID discovery for \(authority.url) answered HTTP \(response.status)")
            error.httpStatus = response.status
        }
        guard error.kind == .invalidAuthority else { return error }
        let reason =
            error.oauthErrorDescription.map { "\(error.oauthError ?? "invalid_authority"): \($0)" }
            ?? "OpenID discovery answered HTTP \(response.status)"
        error.message = "the identity service does not know the authority \(authority.url): \(reason)"
        return error
    }
}
