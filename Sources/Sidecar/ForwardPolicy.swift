import JSON
import JSONRPC
import TokenCache

/// Who approves a sign-in that a forwarded session (the agent's forward socket) asks for:
/// nobody (`"deny"`, the default), or a command on the laptop (`["zenity", "--question",
/// "--text"]`, a script) run with the request's description as its last argument; exit
/// status 0 approves.
public enum ForwardApproval: Sendable, Equatable {
    case deny
    case command([String])

    /// The `forwardApproval` key's value: `"deny"` or a non-empty array of strings.
    init?(_ value: JSONValue?) throws(RPCError) {
        switch value {
        case nil, .null?: return nil
        case .string("deny")?: self = .deny
        case .array(let items)? where !items.isEmpty && items.allSatisfy({ $0.stringValue?.isEmpty == false }):
            self = .command(items.compactMap(\.stringValue))
        default:
            throw .invalidParams(
                "'forwardApproval' must be \"deny\" or a command as an array of strings (exit status 0 approves)", member: "forwardApproval")
        }
    }
}

/// The rules of the agent's forward socket, the one meant for `ssh -R` and containers: the
/// other end is less trusted than the laptop, so it gets access tokens for the scopes the
/// laptop's `forwardScopes` lists and the accounts' public fields, and nothing that outlives
/// a token or changes the laptop (one home for these rules; `ForwardedService` in `Agent`
/// applies them).
public enum ForwardPolicy {
    /// What a forwarded session may call, and what it is told instead.
    public enum Access: Equatable, Sendable {
        /// Answered as on the main socket (the reply then goes through ``redact(_:)``).
        case allowed
        /// Answered only once the laptop's user approves (`forwardApproval`).
        case needsApproval
        /// Refused with ``methodRefused(_:)``.
        case refused
    }

    /// The JSON-RPC code of every refusal on the forward socket (`data.name` says which).
    public static let code = -51014

    /// The rule per method.
    public static func access(_ method: SidecarMethod) -> Access {
        switch method {
        case .initialize, .ping, .getDeviceInformation, .getAccounts, .getCurrentAccount, .acquireTokenSilent, .callGraph: .allowed
        case .acquireToken: .needsApproval
        case .signout, .setCurrentAccount, .diagnosticsSleep, .diagnosticsEcho: .refused
        }
    }

    /// A method a forwarded session may not call (sign-out, switching the laptop's account).
    public static func methodRefused(_ method: String) -> RPCError {
        RPCError(
            code: code,
            message: "\(method) is not allowed through a forwarded agent: run it on the machine the agent runs on",
            name: "forwardMethodRefused", data: ["method": .string(method)])
    }

    /// Scopes outside the laptop's allow list.
    public static func scopesRefused(_ scopes: [String]) -> RPCError {
        RPCError(
            code: code,
            message: "scope \(scopes.joined(separator: " ")) is not in forwardScopes, the agent's list of scopes a forwarded "
                + "session may have; add it to forwardScopes in the configuration of the agent's machine",
            name: "forwardScopeRefused", data: ["scopes": JSONValue(scopes), "key": "forwardScopes"])
    }

    /// A sign-in the laptop's user did not approve (or no approval is configured).
    public static func signInRefused(_ reason: String) -> RPCError {
        RPCError(code: code, message: "sign-in through a forwarded agent refused: \(reason)", name: "forwardSignInRefused")
    }

    /// A configuration the forwarded session may not choose.
    public static func configurationRefused(_ message: String, member: String) -> RPCError {
        RPCError(code: code, message: message, name: "forwardConfigurationRefused", data: ["member": .string(member)])
    }

    /// The requested scopes `forwardScopes` does not list (the OpenID Connect scopes say
    /// nothing about a resource and are never refused; case is ignored as MSAL does).
    public static func unlisted(_ requested: [String], allowed: [String]) -> [String] {
        let allowedSet = ScopeSet(allowed)
        return ScopeSet(requested).resourceScopes.filter { !allowedSet.isSuperset(of: ScopeSet([$0])) }
    }

    /// The configuration a forwarded session runs with: the agent's own (`base`), never the
    /// remote's. The remote may repeat the agent's `clientId` and `authority` (it may not choose
    /// another application or authority: the laptop's refresh tokens would serve them) and
    /// choose its default `scopes` (still checked against `forwardScopes`); every other key it
    /// sends (the cache, key commands, the browser, time limits) is about its own machine and is
    /// ignored. Sign-ins open the laptop's browser (`browser` is `system`).
    public static func configuration(remote: ConfigurationOverrides?, base: ConfigurationOverrides) throws(RPCError) -> ConfigurationOverrides {
        guard let clientId = base.clientId, !clientId.isEmpty else {
            throw configurationRefused(
                "the forwarding agent has no clientId: set it in the configuration of the agent's machine (forwarded sessions use its application)",
                member: "clientId")
        }
        var result = base
        result.browser = .system
        guard let remote else { return result }
        if let other = remote.clientId, other != clientId {
            throw configurationRefused(
                "clientId \(other) is not the forwarding agent's application (\(clientId)); a forwarded session uses the agent's", member: "clientId")
        }
        let authority = base.authority ?? Configuration(clientId: clientId).authority
        if let other = remote.authority, other.lowercased() != authority.lowercased() {
            throw configurationRefused(
                "authority \(other) is not the forwarding agent's (\(authority)); a forwarded session uses the agent's", member: "authority")
        }
        if let scopes = remote.scopes { result.scopes = scopes }
        return result
    }

    /// `initialize`'s result for a forwarded session: `capabilities.methods` without the
    /// methods refused here.
    public static func advertised(_ result: JSONValue) -> JSONValue {
        guard case .object(var object) = result, case .object(var capabilities)? = object["capabilities"],
            let methods = capabilities["methods"]?.arrayValue
        else { return result }
        capabilities["methods"] = .array(
            methods.filter { name in name.stringValue.flatMap(SidecarMethod.init(rawValue:)).map { access($0) != .refused } ?? true })
        object["capabilities"] = .object(capabilities)
        return .object(object)
    }

    /// A reply as a forwarded session receives it: no raw ID token (`idToken`) and no ID
    /// token claims beyond the account fields (`idTokenClaims`), wherever an account or a
    /// token result appears. (No reply ever carries a refresh token.)
    public static func redact(_ result: JSONValue) -> JSONValue {
        guard case .object(var object) = result else { return result }
        object["idToken"] = nil
        object["idTokenClaims"] = nil
        for key in ["account", "previousAccount"] { if let account = object[key] { object[key] = redact(account) } }
        if case .array(let accounts)? = object["accounts"] { object["accounts"] = .array(accounts.map(redact)) }
        return .object(object)
    }
}
