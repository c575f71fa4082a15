import AuthSeams
import JSON

/// The broker's answers read into the auth core's values, and its errors into ``AuthError``s.
/// What the fields mean comes from the open description of the interface (README.md,
/// "Managed Linux devices: the broker").
enum BrokerAnswers {
    /// The answer's JSON object; an error object in it (at the top, or in `brokerTokenResponse`)
    /// becomes its ``AuthError``.
    static func object(_ text: String, of method: BrokerMethod) throws(AuthError) -> JSONObject {
        guard let object = (try? JSONValue.parse(text))?.objectValue else {
            throw AuthError(.malformedResponse, "the identity broker's answer to \(method.rawValue) is not a JSON object")
        }
        if let error = object["error"]?.objectValue ?? object["brokerTokenResponse"]?["error"]?.objectValue {
            throw Self.error(error, of: method)
        }
        return object
    }

    /// An account as the broker describes it (`homeAccountId`, `username`, `realm`, ...).
    static func account(_ json: JSONValue?, environment: String) -> Account? {
        guard let json, let home = json["homeAccountId"]?.stringValue, !home.isEmpty,
            let username = json["username"]?.stringValue
        else { return nil }
        let tenant = json["realm"]?.stringValue ?? json["tenantId"]?.stringValue ?? ""
        return Account(
            homeAccountId: home, localAccountId: json["localAccountId"]?.stringValue ?? "",
            environment: json["environment"]?.stringValue ?? environment, tenantId: tenant, username: username,
            name: json["name"]?.stringValue)
    }

    /// `brokerTokenResponse` as a token result.
    static func token(
        _ object: JSONObject, requested: [String], account fallback: JSONValue?, authority: Authority, correlationId: String
    ) throws(AuthError) -> (TokenResult, accountJSON: JSONValue?) {
        guard let response = object["brokerTokenResponse"], let accessToken = response["accessToken"]?.stringValue,
            !accessToken.isEmpty
        else {
            throw AuthError(.malformedResponse, "the identity broker's token answer has no accessToken")
        }
        let accountJSON = response["account"] ?? fallback
        guard let account = account(accountJSON, environment: authority.host) else {
            throw AuthError(.malformedResponse, "the identity broker's token answer names no account")
        }
        guard let expiresOnMilliseconds = response["expiresOn"]?.numberValue else {
            throw AuthError(.malformedResponse, "the identity broker's token answer has no expiresOn")
        }
        let granted = response["grantedScopes"]?.arrayValue?.compactMap(\.stringValue)
        let result = TokenResult(
            accessToken: accessToken, tokenType: response["accessTokenType"]?.intValue == 1 ? "pop" : "Bearer",
            expiresOn: Int64(expiresOnMilliseconds / 1000), scopes: granted ?? requested, account: account,
            idToken: response["idToken"]?.stringValue, tenantId: account.tenantId, authority: authority.url,
            correlationId: correlationId, fromCache: false)
        return (result, accountJSON)
    }

    /// The broker's error object (`status`, `subStatus`, `errorCode`, `context`, `protocolError`)
    /// as an ``AuthError``. `status` is MSAL's response status, as a number or its name.
    static func error(_ error: JSONObject, of method: BrokerMethod) -> AuthError {
        let status = error["status"].flatMap { $0.intValue.map(Int.init) ?? $0.stringValue.flatMap(statusNumbers.firstIndex(of:)) }
        let context = error["context"]?.stringValue ?? error["errorMessage"]?.stringValue ?? "no detail"
        let kind = status.map(kind(ofStatus:)) ?? .internal
        let name = status.flatMap { statusNumbers.indices.contains($0) ? statusNumbers[$0] : nil } ?? "Unexpected"
        var failure = AuthError(kind, "the identity broker answered \(method.rawValue) with \(name): \(context)")
        failure.oauthError = error["protocolError"]?.stringValue
        if let code = error["errorCode"]?.intValue { failure.errorCodes = [Int(code)] }
        if kind == .interactionRequired, let claims = error["claims"]?.stringValue { failure.claims = claims }
        return failure
    }

    /// MSAL's response statuses, by number (their order in MSAL's native runtime).
    static let statusNumbers = [
        "Unexpected", "Reserved", "InteractionRequired", "NoNetwork", "NetworkTemporarilyUnavailable",
        "ServerTemporarilyUnavailable", "ApiContractViolation", "UserCanceled", "ApplicationCanceled",
        "IncorrectConfiguration", "InsufficientBuffer", "AuthorityUntrusted", "UserSwitch", "AccountUnusable",
        "UserDataRemovalRequired", "KeyNotFound", "AccountNotFound", "TransientError",
    ]

    static func kind(ofStatus status: Int) -> AuthError.Kind {
        switch status {
        case 2, 12, 13, 14, 15: .interactionRequired
        case 3, 4: .networkError
        case 5, 17: .serverError
        case 7, 8: .userCanceled
        case 6, 9: .invalidConfiguration
        case 11: .authorityNotTrusted
        case 16: .accountNotFound
        default: .internal
        }
    }

    /// A call that got no answer as an ``AuthError``.
    static func callError(_ error: BrokerCallError, of method: BrokerMethod) -> AuthError {
        switch error {
        case .unavailable(let reason):
            AuthError(.brokerUnavailable, "the identity broker (\(BrokerInterface.busName)) is not available: \(reason)")
        case .timedOut(let limit):
            AuthError(.timeout, "no answer from the identity broker to \(method.rawValue) within \(limit.components.seconds) s")
        case .failed(let name, let message):
            AuthError(.internal, "the identity broker's \(method.rawValue) failed: \(name): \(message)")
        }
    }
}
