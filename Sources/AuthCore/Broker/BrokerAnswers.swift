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
            throw Self.error(error, of: method, stsSubError: object["brokerTokenResponse"]?["stsSubError"]?.stringValue)
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

    /// The keys of the broker's account object (its Account.json; what MSALRuntime sends).
    static let accountKeys: [(String, JSONValue)] = [
        ("alternativeAccountId", ""), ("clientInfo", ""), ("environment", ""), ("familyName", ""), ("givenName", ""),
        ("homeAccountId", ""), ("homeEnvironment", ""), ("localAccountId", ""), ("middleName", ""), ("name", ""),
        ("passwordChangeUrl", ""), ("passwordExpiry", .int(0)), ("realm", ""), ("username", ""),
    ]

    /// `json` (the broker's account object) with every key of ``accountKeys``: the ones it
    /// lacks added empty, the ones it has kept as they are (so is any other key it has).
    static func completeAccount(_ json: JSONValue) -> JSONValue {
        guard var object = json.objectValue else { return json }
        for (key, empty) in accountKeys where object[key] == nil { object[key] = empty }
        return .object(object)
    }

    /// The account of a token answer without `account` (himmelblau never sends one): from
    /// its `clientInfo` (`uid`, `utid`) and ID token (`oid`, `preferred_username`, `name`).
    static func accountJSON(from response: JSONValue, environment: String) -> JSONValue? {
        guard let raw = response["clientInfo"]?.stringValue, let info = try? ClientInfo(raw: raw) else { return nil }
        let claims = response["idToken"]?.stringValue.flatMap { try? IDToken(raw: $0).claims } ?? [:]
        let username = claims["preferred_username"]?.stringValue ?? claims["upn"]?.stringValue ?? claims["email"]?.stringValue
        guard let username else { return nil }
        var object: JSONObject = [
            "homeAccountId": .string(info.homeAccountId), "localAccountId": .string(claims["oid"]?.stringValue ?? info.uid),
            "environment": .string(environment), "realm": .string(claims["tid"]?.stringValue ?? info.utid),
            "username": .string(username), "clientInfo": .string(raw),
        ]
        if let name = claims["name"]?.stringValue { object["name"] = .string(name) }
        return completeAccount(.object(object))
    }

    /// `grantedScopes`: a space-separated string (the v2 schema) or an array (older answers).
    static func grantedScopes(_ value: JSONValue?) -> [String]? {
        if let text = value?.stringValue {
            let scopes = text.split(separator: " ").map(String.init)
            return scopes.isEmpty ? nil : scopes
        }
        let listed = value?.arrayValue?.compactMap(\.stringValue)
        return listed?.isEmpty == false ? listed : nil
    }

    /// `brokerTokenResponse` as a token result.
    /// A token answer (`brokerTokenResponse`). `pop`: the request carried `popParams`, so the
    /// answer must be a PoP token (`accessTokenType` 1), whose `accessToken` is the broker's signed
    /// HTTP request (MSALRuntime's authorization header is "pop " + accessToken; `signedHttpRequest`
    /// when the broker adds it), the token itself in its `at`; a bearer request must get a bearer
    /// token (never another kind).
    static func token(
        _ object: JSONObject, requested: [String], account fallback: JSONValue?, authority: Authority, correlationId: String,
        pop: Bool = false
    ) throws(AuthError) -> (TokenResult, accountJSON: JSONValue?) {
        guard let response = object["brokerTokenResponse"], let accessToken = response["accessToken"]?.stringValue,
            !accessToken.isEmpty
        else {
            throw AuthError(.malformedResponse, "the identity broker's token answer has no accessToken")
        }
        let given = response["account"].flatMap { $0.objectValue == nil ? nil : $0 }
        let accountJSON = given ?? accountJSON(from: response, environment: authority.host) ?? fallback
        guard let account = account(accountJSON, environment: authority.host) else {
            throw AuthError(.malformedResponse, "the identity broker's token answer names no account (no account, clientInfo nor ID token)")
        }
        guard let expiresOnMilliseconds = response["expiresOn"]?.numberValue else {
            throw AuthError(.malformedResponse, "the identity broker's token answer has no expiresOn")
        }
        let granted = grantedScopes(response["grantedScopes"])
        let (token, shr) = try popParts(response, accessToken: accessToken, pop: pop)
        var result = TokenResult(
            accessToken: token, tokenType: pop ? PopBinding.tokenType : "Bearer",
            expiresOn: Int64(expiresOnMilliseconds / 1000), scopes: granted ?? requested, account: account,
            idToken: response["idToken"]?.stringValue, tenantId: account.tenantId, authority: authority.url,
            correlationId: correlationId, fromCache: false)
        result.signedHttpRequest = shr
        return (result, accountJSON)
    }

    /// The token and, for a PoP answer, the broker's signed HTTP request; a kind other than the
    /// one asked is refused.
    private static func popParts(_ response: JSONValue, accessToken: String, pop: Bool) throws(AuthError) -> (String, shr: String?) {
        let isPop = response["accessTokenType"]?.intValue == 1
        guard isPop == pop else {
            throw AuthError(
                .malformedResponse,
                "the identity broker answered a \(isPop ? "proof-of-possession" : "bearer") token to a \(pop ? "proof-of-possession" : "bearer") request"
            )
        }
        guard pop else { return (accessToken, nil) }
        let shr = response["signedHttpRequest"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? accessToken
        guard let token = JWTPayload.claims(of: shr)?["at"]?.stringValue, !token.isEmpty else {
            throw AuthError(.malformedResponse, "the identity broker's proof-of-possession answer carries no signed HTTP request with a token (at)")
        }
        return (token, shr)
    }

    /// The broker's error object (Error.json: `context`, `tag`, `errorCode`, `status`,
    /// `subStatus`, `diagnostics`; older answers: `protocolError`, `errorMessage`) as an
    /// ``AuthError``. `status` is MSAL's response status, as a number or its name. The AAD
    /// code (`AADSTS…` in `context`), the suberror and the tag are kept in the error's data.
    static func error(_ error: JSONObject, of method: BrokerMethod, stsSubError: String? = nil) -> AuthError {
        let status = error["status"].flatMap { $0.intValue.map(Int.init) ?? $0.stringValue.flatMap(statusNumbers.firstIndex(of:)) }
        let context = error["context"]?.stringValue ?? error["errorMessage"]?.stringValue ?? "no detail"
        let kind = status.map(kind(ofStatus:)) ?? .internal
        let name = status.flatMap { statusNumbers.indices.contains($0) ? statusNumbers[$0] : nil } ?? "Unexpected"
        var failure = AuthError(kind, "the identity broker answered \(method.rawValue) with \(name): \(context)\(advice(status))")
        failure.oauthError = error["protocolError"]?.stringValue
        failure.brokerStatus = status
        failure.brokerTag = error["tag"]?.intValue.map(Int.init)
        let aadCode = aadCode(in: context)
        if let code = aadCode { failure.errorCodes = [code] }
        failure.suberror = stsSubError ?? error["stsSubError"]?.stringValue ?? error["suberror"]?.stringValue ?? suberror(in: context)
        if let code = error["errorCode"]?.intValue, code != 0 { failure.brokerErrorCode = Int(code) }
        if kind == .interactionRequired, let claims = error["claims"]?.stringValue { failure.claims = claims }
        return failure
    }

    /// What a person can do about statuses 18 and 20.
    private static func advice(_ status: Int?) -> String {
        switch status {
        case 18: " (the broker asks to switch accounts: sign in again, naming the account)"
        case 20: " (this device is not registered with Microsoft Entra ID: register it in the Intune Portal app, or ask an administrator)"
        default: ""
        }
    }

    /// The first `AADSTS<digits>` in `text` (the broker puts the service's code in `context`).
    static func aadCode(in text: String) -> Int? {
        guard let range = text.firstRange(of: "AADSTS") else { return nil }
        let digits = text[range.upperBound...].prefix(while: { $0.isASCII && $0.isNumber }).prefix(9)
        return Int(digits)
    }

    /// `suberror: x` / `suberror=x` / `"suberror":"x"` in `text`.
    static func suberror(in text: String) -> String? {
        guard let range = text.firstRange(of: "suberror") else { return nil }
        let rest = text[range.upperBound...].drop(while: { $0 == "\"" || $0 == ":" || $0 == "=" || $0 == " " })
        let word = rest.prefix(while: { $0.isLetter || $0 == "_" }).prefix(64)
        return word.isEmpty ? nil : String(word)
    }

    /// MSAL's response statuses, by number (their order in MSAL's native runtime).
    static let statusNumbers = [
        "Unexpected", "Reserved", "InteractionRequired", "NoNetwork", "NetworkTemporarilyUnavailable",
        "ServerTemporarilyUnavailable", "ApiContractViolation", "UserCanceled", "ApplicationCanceled",
        "IncorrectConfiguration", "InsufficientBuffer", "AuthorityUntrusted", "UserSwitch", "AccountUnusable",
        "UserDataRemovalRequired", "KeyNotFound", "AccountNotFound", "TransientError", "AccountSwitch",
        "RequiredBrokerMissing", "DeviceNotRegistered", "FallbackToNativeMsal",
    ]

    /// 19 (RequiredBrokerMissing) and 21 (FallbackToNativeMsal) say the broker cannot serve
    /// this: ``AuthError/Kind/brokerUnavailable``, so `auto` signs in without it.
    static func kind(ofStatus status: Int) -> AuthError.Kind {
        switch status {
        case 19, 21: .brokerUnavailable
        case 20: .workplaceJoinRequired
        case 2, 12, 13, 14, 15, 18: .interactionRequired
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
        case .gone(let reason):
            AuthError(.brokerUnavailable, "the identity broker (\(BrokerInterface.busName)) went away during \(method.rawValue): \(reason)")
        case .tooLarge(let limit):
            {
                var failure = AuthError(
                    .responseTooLarge, "the identity broker's answer to \(method.rawValue) is larger than the message limit (\(limit) bytes)")
                failure.limit = limit
                return failure
            }()
        case .failed(let name, let message):
            AuthError(.internal, "the identity broker's \(method.rawValue) failed: \(name): \(message)")
        }
    }
}
