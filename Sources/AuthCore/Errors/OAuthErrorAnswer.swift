/// An endpoint whose error answers ``OAuthErrorClassifier`` reads: the same `error` can mean
/// different things at different endpoints.
public enum OAuthEndpoint: Sendable, Equatable {
    /// The `error` query parameters of the authorization redirect.
    case authorizeRedirect
    /// The token endpoint redeeming an authorization code (or any grant not listed below).
    case token
    /// The token endpoint redeeming a refresh token.
    case refresh
    /// The token endpoint polled with a device code.
    case deviceCodePolling
    /// OpenID discovery (`.well-known/openid-configuration`).
    case openIDDiscovery
    /// Microsoft's instance discovery (`/common/discovery/instance`).
    case instanceDiscovery

    /// The token endpoint's case for a form with this `grant_type`.
    static func token(grantType: String?) -> OAuthEndpoint {
        switch grantType {
        case "refresh_token": .refresh
        case DeviceCodeGrant.grantType: .deviceCodePolling
        default: .token
        }
    }
}

/// What an error answer says: OAuth's `error`, `error_description`, and Microsoft's
/// `suberror` (`error_subcode` on a redirect) and `error_codes`.
public struct OAuthErrorAnswer: Sendable, Equatable {
    /// OAuth's `error`; nil when the answer carried none (e.g. an empty 400).
    public var error: String?
    public var description: String
    public var suberror: String?
    public var errorCodes: [Int]
    public var httpStatus: Int?

    public init(
        error: String?, description: String = "", suberror: String? = nil, errorCodes: [Int] = [],
        httpStatus: Int? = nil
    ) {
        self.error = error
        self.description = description
        self.suberror = suberror
        self.errorCodes = errorCodes
        self.httpStatus = httpStatus
    }

    /// The answer an ``AuthError`` was built from.
    public init(_ error: AuthError) {
        self.init(
            error: error.oauthError, description: error.oauthErrorDescription ?? "", suberror: error.suberror,
            errorCodes: error.errorCodes ?? [], httpStatus: error.httpStatus)
    }

    /// Whether the service named its code `code` (AAD's `error_codes`, or `AADSTS<code>` in
    /// the description: a redirect carries only the latter).
    func has(serviceCode code: Int) -> Bool {
        errorCodes.contains(code) || description.contains("AADSTS\(code)")
    }
}

/// What an error answer means to the client.
public enum OAuthErrorMeaning: Sendable, Equatable {
    /// The request failed with this kind of error.
    case fails(AuthError.Kind)
    /// Device code polling: the user has not finished; poll again after the interval.
    case keepPolling
    /// Device code polling: poll again, 5 seconds less often (RFC 8628 §3.5).
    case slowDown

    /// The error kind (polling answers count as `serverError` where they are not expected).
    public var kind: AuthError.Kind {
        if case .fails(let kind) = self { return kind }
        return .serverError
    }
}
