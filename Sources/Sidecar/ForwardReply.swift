import AuthCore
import JSON
import JSONRPC

/// What a forwarded session's replies may carry, by allow list: a field this type does not
/// name does not leave. Access tokens leave only when everything they are for is within
/// `forwardScopes` (the result's `scopes`, and `scp`/`roles` when the token is a JWT); never
/// an ID token, a refresh token or ID token claims.
public enum ForwardReply {
    /// The members of a token result that leave.
    static let tokenFields: Set<String> = [
        "accessToken", "tokenType", "expiresOn", "scopes", "account", "tenantId", "authority", "correlationId", "fromCache",
        // A PoP result's signature for one request (forwardProofOfPossession), made with the laptop's key.
        "signedHttpRequest", "authorizationHeader",
    ]
    /// The members of `signHttpRequest`'s result that leave.
    static let signedRequestFields: Set<String> = [
        "signedHttpRequest", "authorizationHeader", "tokenType", "expiresOn", "fromCache", "correlationId",
    ]

    /// `signHttpRequest`'s result, when the token in its SHR (`at`) is for nothing beyond
    /// `scopes` (its `scopes` being the request's); else -51014 as ``token(_:within:)``.
    public static func signedRequest(_ result: JSONValue, requested: [String], within scopes: ForwardScopes) throws(RPCError) -> JSONValue {
        let token = result["signedHttpRequest"]?.stringValue.flatMap { JWTPayload.claims(of: $0)?["at"] } ?? .null
        let beyond = beyondScopes(["accessToken": token, "scopes": JSONValue(requested)], scopes)
        guard beyond.isEmpty else { throw tokenRefused(beyond) }
        return allowed(result, fields: signedRequestFields)
    }
    /// The members of an account that leave (a listing's `tenants` and `isCurrent` too).
    static let accountFields: Set<String> = [
        "homeAccountId", "localAccountId", "environment", "tenantId", "username", "name", "tenants", "isCurrent",
    ]

    /// The token that `result` carries leaves only within `scopes`; else -51014
    /// (`forwardTokenRefused`) naming what it is for beyond them.
    public static func token(_ result: JSONValue, within scopes: ForwardScopes) throws(RPCError) -> JSONValue {
        try token(result, beyond: beyondScopes(result, scopes))
    }

    /// The token that `result` carries, when it is for nothing `beyond` the forward scopes
    /// (``beyondScopes(_:_:)``, found already); else -51014 naming what it is for beyond them.
    public static func token(_ result: JSONValue, beyond: [String]) throws(RPCError) -> JSONValue {
        guard beyond.isEmpty else { throw tokenRefused(beyond) }
        return allowed(result, fields: tokenFields)
    }

    /// -51014 (`forwardTokenRefused`): the token is also for `beyond`, outside the forward scopes.
    public static func tokenRefused(_ beyond: [String]) -> RPCError {
        RPCError(
            code: ForwardPolicy.code,
            message: "the token for this request is also for \(beyond.joined(separator: " ")), beyond the agent's forwardScopes; "
                + "list every scope the service grants with it in forwardScopes on the agent's machine",
            name: "forwardTokenRefused", data: ["scopes": JSONValue(beyond), "key": "forwardScopes"])
    }

    /// What the token in `result` is for beyond `scopes` (empty: it may leave).
    public static func beyondScopes(_ result: JSONValue, _ scopes: ForwardScopes) -> [String] {
        guard let token = result["accessToken"]?.stringValue else { return ["(no token)"] }
        var beyond = scopes.unlisted(result["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        if let claims = JWTPayload.claims(of: token) {
            let audience = claims["aud"]?.stringValue
            let names =
                (claims["scp"]?.stringValue?.split(separator: " ").map(String.init) ?? [])
                + (claims["roles"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            beyond += names.filter { !scopes.coversClaim($0, audience: audience) }
        }
        return beyond
    }

    /// `result` with only `fields`, and its accounts with only ``accountFields``.
    public static func allowed(_ result: JSONValue, fields: Set<String>) -> JSONValue {
        guard case .object(let object) = result else { return result }
        var kept: JSONObject = [:]
        for (key, value) in object where fields.contains(key) { kept[key] = value }
        for key in ["account", "previousAccount"] {
            if let account = kept[key] { kept[key] = account.isNull ? account : allowed(account, fields: accountFields) }
        }
        if case .array(let accounts)? = kept["accounts"] { kept["accounts"] = .array(accounts.map { allowed($0, fields: accountFields) }) }
        return .object(kept)
    }

    /// `initialize`'s result for a forwarded session: the protocol's own members, the
    /// configuration's clientId, authority and default scopes, the forward limits, and that
    /// the session is forwarded; nothing about the laptop (its cache, key, host or pid).
    /// `popHosts`: the agent's `forwardProofOfPossession` (`signHttpRequest` is listed, and
    /// `forward.proofOfPossession` names them, only when it lists hosts).
    public static func initialize(_ result: JSONValue, scopes: ForwardScopes, signIn: String, popHosts: [String] = []) -> JSONValue {
        var kept: JSONObject = [:]
        for key in ["serverInfo", "protocolVersion"] { kept[key] = result[key] }
        if case .object(var capabilities)? = result["capabilities"] {
            let methods = capabilities["methods"]?.arrayValue ?? []
            capabilities["methods"] = .array(
                methods.filter { name in
                    name.stringValue.flatMap(SidecarMethod.init(rawValue:)).map {
                        ForwardPolicy.rule($0, popOptIn: !popHosts.isEmpty).access != .refused
                    } ?? true
                })
            capabilities["serverRequests"] = []  // the laptop's browser opens sign-ins
            capabilities["serverNotifications"] = []  // a device code is shown on the laptop only
            kept["capabilities"] = .object(capabilities)
        }
        var configuration: JSONObject = [:]
        for key in ["clientId", "authority", "scopes"] { configuration[key] = result["configuration"]?[key] }
        kept["configuration"] = .object(configuration)
        var forward: JSONObject = ["scopes": JSONValue(scopes.allowed), "signIn": .string(signIn)]
        if !popHosts.isEmpty { forward["proofOfPossession"] = JSONValue(popHosts) }
        kept["forward"] = .object(forward)
        kept["agent"] = ["forwarded": true]
        return .object(kept)
    }
}
