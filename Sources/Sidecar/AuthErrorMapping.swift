import AuthCore
import JSON
import JSONRPC

/// The one place where auth failures become JSON-RPC errors: MSAL's public codes where
/// MSAL has one, the project's own -51xxx codes for platform failures (protocol/errors.md).
/// The kinds themselves are decided by AuthCore's `OAuthErrorClassifier`.
public enum AuthErrorMapping {
    /// -50002: a sign-in is needed (the shell verbs tell the user to run `login`).
    public static let interactionRequiredCode = code(for: .interactionRequired)
    /// -51011: the account the request named is not signed in.
    public static let accountNotFoundCode = code(for: .accountNotFound)
    /// -51018: the tenant refuses the device code flow (the verbs name the ways that work).
    public static let deviceCodeBlockedCode = code(for: .deviceCodeBlocked)
    /// The service codes by which Conditional Access refuses the device code flow.
    public static let deviceCodeRefusals = OAuthErrorClassifier.deviceCodeRefusals

    /// The JSON-RPC error code of `kind`.
    public static func code(for kind: AuthError.Kind) -> Int {
        switch kind {
        case .internal: -50000
        case .workplaceJoinRequired: -50001
        case .interactionRequired: -50002
        case .serverDeclinedScopes: -50003
        case .serverProtectionPoliciesRequired: -50004
        case .userCanceled: -50005
        case .serverError: -50006
        case .networkError: -51001
        case .timeout: -51002
        case .tlsError: -51003
        case .malformedResponse, .responseTooLarge: -51004
        case .cacheUnavailable: -51005
        case .browserUnavailable: -51006
        case .interactiveInProgress: -51007
        case .authorityNotTrusted: -51008
        case .insecureAuthority: -51009
        case .invalidConfiguration, .invalidAuthority: -51010
        case .accountNotFound: -51011
        case .ambiguousAccount: -51012
        case .passwordResetRequired: -51013
        case .brokerUnavailable: -51015
        case .tokenKindNotServed: -51016
        case .pastedAddressRefused, .pastedStateMismatch, .pastedCodeFromAnotherSignIn: -51017
        case .deviceCodeBlocked: -51018
        }
    }

    static func rpcError(_ error: AuthError) -> RPCError {
        var data: JSONObject = [:]
        if let value = error.oauthError { data["oauthError"] = .string(value) }
        if let value = error.oauthErrorDescription { data["oauthErrorDescription"] = .string(value) }
        if let value = error.suberror { data["suberror"] = .string(value) }
        if let value = error.errorCodes { data["errorCodes"] = .array(value.map { .int(Int64($0)) }) }
        if let value = error.correlationId { data["correlationId"] = .string(value) }
        if let value = error.claims { data["claims"] = .string(value) }
        if let value = error.grantedScopes { data["grantedScopes"] = JSONValue(value) }
        if let value = error.declinedScopes { data["declinedScopes"] = JSONValue(value) }
        if let value = error.httpStatus { data["httpStatus"] = .int(Int64(value)) }
        if let value = error.retryAfter { data["retryAfter"] = .int(Int64(value)) }
        if let value = error.limit { data["limit"] = .int(Int64(value)) }
        if let value = error.backend { data["backend"] = .string(value) }
        if let value = error.tokenKind { data["tokenKind"] = .string(value) }
        return RPCError(code: code(for: error.kind), message: error.message, name: error.kind.rawValue, data: data)
    }

    /// Runs `body`, turning an ``AuthError`` into its ``RPCError``.
    static func translating<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as AuthError {
            throw rpcError(error)
        }
    }
}
