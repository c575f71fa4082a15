/// An authentication failure: a kind that callers switch on (the sidecar maps it to the
/// protocol's error codes), a human message, and the service's details. Never a token.
public struct AuthError: Error, Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        // MSAL's public error codes.
        case `internal`, workplaceJoinRequired, interactionRequired, serverDeclinedScopes
        case serverProtectionPoliciesRequired, userCanceled, serverError
        // Platform failures MSAL leaves to the platform.
        case networkError, timeout, tlsError, malformedResponse, cacheUnavailable
        case browserUnavailable, interactiveInProgress, authorityNotTrusted, insecureAuthority
        case invalidConfiguration, accountNotFound, ambiguousAccount
        /// B2C's "forgot password" answer (AADB2C90118): the app should start the reset policy.
        case passwordResetRequired
        /// The service does not know the authority (an unknown tenant: AADSTS90002, or no
        /// discovery document there); a kind of ``invalidConfiguration`` with its own name.
        case invalidAuthority
    }

    public var kind: Kind
    public var message: String
    public var oauthError: String?
    public var oauthErrorDescription: String?
    public var suberror: String?
    public var errorCodes: [Int]?
    public var correlationId: String?
    public var claims: String?
    public var grantedScopes: [String]?
    public var declinedScopes: [String]?
    public var httpStatus: Int?
    public var retryAfter: Int?

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

extension AuthError {
    static func malformed(_ what: String) -> AuthError {
        AuthError(.malformedResponse, "the identity service sent a malformed answer: \(what)")
    }
}

extension AuthError: CustomStringConvertible {
    /// The message: wherever an error is interpolated (a log line, another message), plain
    /// words rather than Swift's rendering of the struct.
    public var description: String { message }
}
