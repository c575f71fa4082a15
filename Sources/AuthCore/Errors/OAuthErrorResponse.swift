import JSON

/// An OAuth error answer (`error`, `error_description`, AAD's `error_codes`, `suberror`,
/// `claims`, ...) turned into an ``AuthError``, its kind decided by ``OAuthErrorClassifier``.
public enum OAuthErrorResponse {
    /// The error for the JSON body `json` of an answer with `httpStatus` from `endpoint`.
    public static func authError(
        json: JSONValue, httpStatus: Int, retryAfter: Int?,
        endpoint: OAuthEndpoint = .token
    ) -> AuthError {
        let error = json["error"]?.stringValue ?? "server_error"
        let description = json["error_description"]?.stringValue
        var result = AuthError(.serverError, description.map { "\(error): \($0)" } ?? error)
        result.oauthError = error
        result.oauthErrorDescription = description
        result.suberror = json["suberror"]?.stringValue
        result.errorCodes = json["error_codes"]?.arrayValue?.compactMap { $0.intValue.map(Int.init) }
        result.correlationId = json["correlation_id"]?.stringValue
        result.claims = json["claims"]?.stringValue
        result.httpStatus = httpStatus
        result.retryAfter = retryAfter
        result.kind = OAuthErrorClassifier.kind(of: OAuthErrorAnswer(result), at: endpoint)
        return result
    }
}
