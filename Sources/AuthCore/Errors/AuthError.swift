/// An authentication failure: a kind that callers switch on (the sidecar maps it to the
/// protocol's error codes), a human message, and the service's details. Never a token.
public struct AuthError: Error, Sendable, Equatable {
    /// What went wrong, as callers switch on it. `Sidecar`'s `AuthErrorMapping` gives each
    /// kind its JSON-RPC code (protocol/errors.md); ``OAuthErrorClassifier`` decides the kind
    /// of every OAuth error answer.
    public enum Kind: String, Sendable, CaseIterable {
        // MSAL's public error codes.
        /// A failure without a better kind (-50000).
        case `internal`
        /// The resource requires a registered device: AADSTS50129 (-50001).
        case workplaceJoinRequired
        /// The user must sign in interactively: no account or refresh token, `invalid_grant`,
        /// `interaction_required`, `consent_required`, `login_required`, an unsatisfied claims
        /// challenge (-50002).
        case interactionRequired
        /// The service granted fewer scopes than requested (-50003).
        case serverDeclinedScopes
        /// An app protection policy is required: suberror `protection_policy_required` (-50004).
        case serverProtectionPoliciesRequired
        /// The user ended the sign-in: cancelled or denied in the browser (`access_denied`,
        /// `error_subcode=cancel`, AADB2C90091) or declined the device code (-50005).
        case userCanceled
        /// The service failed: 5xx, `server_error`, `temporarily_unavailable`, or an OAuth
        /// error no other kind covers (-50006).
        case serverError
        // Platform failures MSAL leaves to the platform.
        /// The service could not be reached: DNS, connection refused or reset (-51001).
        case networkError
        /// A request, the browser sign-in or a device code ran out of time (-51002).
        case timeout
        /// TLS verification or handshake failed (-51003).
        case tlsError
        /// The service answered something that is not the protocol, or a token that fails
        /// validation (-51004).
        case malformedResponse
        /// The token cache cannot be read, written, locked or decrypted, or is unsafe (-51005).
        case cacheUnavailable
        /// No browser can be opened, nor a client asked to (-51006).
        case browserUnavailable
        /// Another interactive sign-in is running in this process (-51007).
        case interactiveInProgress
        /// The authority is not validated by instance discovery nor listed as known, or its
        /// origin is not trusted for this request (-51008).
        case authorityNotTrusted
        /// The authority or its metadata is not https (nor loopback) (-51009).
        case insecureAuthority
        /// The application or a request is configured wrongly: `invalid_client`,
        /// `unauthorized_client`, `invalid_request`, `invalid_scope`, a bad redirect URI (-51010).
        case invalidConfiguration
        /// The account a request named is not in the cache (-51011).
        case accountNotFound
        /// A username matches several cached accounts (-51012).
        case ambiguousAccount
        /// B2C's "forgot password" answer (AADB2C90118): the app should start the reset policy (-51013).
        case passwordResetRequired
        /// The service does not know the authority (an unknown tenant: AADSTS90002, or no
        /// discovery document there); a kind of ``invalidConfiguration`` with its own name (-51010).
        case invalidAuthority
        /// The service's answer is larger than the request's limit (``AuthError/limit``): 1 MiB
        /// from the identity service, the message limit from Graph; a kind of
        /// ``malformedResponse`` with its own name (-51004).
        case responseTooLarge
        /// The Linux identity broker is not there (no D-Bus library, no session bus, its name
        /// not on the bus) while `broker` is `"required"`, or went away during a call (-51015).
        case brokerUnavailable
        /// The backend answering this configuration does not issue the token kind asked for
        /// (``Backend/servedKinds``: the broker or the app identity asked for an SSH
        /// certificate); refused before any request is made. ``AuthError/backend`` and
        /// ``AuthError/tokenKind`` name them (-51016).
        case tokenKindNotServed
        /// A paste-back sign-in's pasted text is not the address it ended on: not its redirect
        /// URI, or without a code or an error (-51017).
        case pastedAddressRefused
        /// The pasted address's `state` is not this sign-in's: another sign-in's address, or
        /// one changed on the way; a kind of ``pastedAddressRefused`` with its own name (-51017).
        case pastedStateMismatch
        /// The pasted code was issued to another sign-in: the service refused this sign-in's
        /// PKCE verifier for it (AADSTS501481), or its ID token's nonce is not this sign-in's;
        /// a kind of ``pastedAddressRefused`` with its own name (-51017).
        case pastedCodeFromAnotherSignIn
        /// The tenant's Conditional Access refuses the device code flow (AADSTS53003,
        /// AADSTS50005 from a device code endpoint): sign in another way (-51018).
        case deviceCodeBlocked
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
    /// ``Kind/responseTooLarge``: the limit in bytes.
    public var limit: Int?
    /// ``Kind/tokenKindNotServed``: the ``Backend`` (its raw value) that refused.
    public var backend: String?
    /// ``Kind/tokenKindNotServed``: the ``TokenKind`` (its raw value) refused.
    public var tokenKind: String?

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
