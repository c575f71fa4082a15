import JSON

/// A successful answer of the token endpoint.
public struct TokenResponse: Sendable {
    public var accessToken: String
    public var tokenType: String
    public var expiresIn: Int64
    public var extExpiresIn: Int64?
    public var refreshIn: Int64?
    public var scope: [String]?
    public var refreshToken: String?
    public var idToken: String?
    public var clientInfo: String?
    public var familyId: String?

    /// Parses the body; `malformedResponse` when required members are missing.
    public init(json: JSONValue) throws(AuthError) {
        guard let accessToken = json["access_token"]?.stringValue, !accessToken.isEmpty else {
            throw .malformed("no access_token in the token response")
        }
        self.accessToken = accessToken
        tokenType = json["token_type"]?.stringValue ?? "Bearer"
        expiresIn = Self.seconds(json["expires_in"]) ?? 3600
        extExpiresIn = Self.seconds(json["ext_expires_in"])
        refreshIn = Self.seconds(json["refresh_in"])
        scope = json["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) }
        refreshToken = json["refresh_token"]?.stringValue
        idToken = json["id_token"]?.stringValue
        clientInfo = json["client_info"]?.stringValue
        familyId = json["foci"]?.stringValue
    }

    /// Seconds given as a number or a numeric string (both occur in the wild).
    static func seconds(_ value: JSONValue?) -> Int64? {
        switch value {
        case .int(let i)?: i
        case .double(let d)?: Int64(exactly: d.rounded())
        case .string(let s)?: Int64(s)
        default: nil
        }
    }
}

/// An OAuth error answer (`error`, `error_description`, AAD's `error_codes`, `suberror`,
/// `claims`, ...) turned into an ``AuthError`` of the right kind.
public enum OAuthErrorResponse {
    /// Errors that mean "the user must interact" (MSAL's interactionRequired).
    static let interactionErrors: Set<String> = ["invalid_grant", "interaction_required", "consent_required", "login_required"]
    /// Errors that mean the application is registered or configured wrongly.
    static let configurationErrors: Set<String> = ["invalid_client", "unauthorized_client", "invalid_request", "invalid_scope"]

    public static func authError(json: JSONValue, httpStatus: Int, retryAfter: Int?) -> AuthError {
        let error = json["error"]?.stringValue ?? "server_error"
        let description = json["error_description"]?.stringValue
        let codes = json["error_codes"]?.arrayValue?.compactMap { $0.intValue } ?? []
        let kind: AuthError.Kind
        if codes.contains(50129) || description?.contains("AADSTS50129") == true {
            kind = .workplaceJoinRequired
        } else if description?.contains("AADB2C90118") == true {
            kind = .passwordResetRequired
        } else if description?.contains("AADB2C90091") == true || error == "access_denied" && description?.contains("cancel") == true {
            kind = .userCanceled
        } else if interactionErrors.contains(error) {
            kind = json["suberror"]?.stringValue == "protection_policy_required" ? .serverProtectionPoliciesRequired : .interactionRequired
        } else if configurationErrors.contains(error) {
            kind = .invalidConfiguration
        } else {
            kind = .serverError
        }
        var result = AuthError(kind, description.map { "\(error): \($0)" } ?? error)
        result.oauthError = error
        result.oauthErrorDescription = description
        result.suberror = json["suberror"]?.stringValue
        result.errorCodes = json["error_codes"]?.arrayValue?.compactMap { $0.intValue.map(Int.init) }
        result.correlationId = json["correlation_id"]?.stringValue
        result.claims = json["claims"]?.stringValue
        result.httpStatus = httpStatus
        result.retryAfter = retryAfter
        return result
    }
}
