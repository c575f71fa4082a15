import AuthCore
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
/// a token or changes the laptop. A deny-by-default table (``rule(_:)``): a method, or a
/// parameter of a method, the table does not name is refused. The one home of these rules;
/// `ForwardSessionPolicy` in `Agent` is the pipeline stage that applies them, and
/// ``ForwardReply`` checks what leaves.
public enum ForwardPolicy {
    /// What a forwarded session may call, and what it is told instead.
    public enum Access: Equatable, Sendable {
        /// Answered as on the main socket (the reply then goes through ``ForwardReply``).
        case allowed
        /// Answered only once the laptop's user approves (`forwardApproval`).
        case needsApproval
        /// Refused with ``methodRefused(_:)``.
        case refused
    }

    /// A method's rule: whether it may be called and the parameters a remote may set.
    public struct Rule: Sendable, Equatable {
        public let access: Access
        /// The params members a forwarded request may carry; any other is refused
        /// (``parameterRefused(_:method:)``). `authority` is allowed only equal to the agent's.
        public let parameters: Set<String>
        /// Whether the method gets a token for `scopes` (checked against `forwardScopes`, its
        /// default scopes too, and its reply's token).
        public let usesToken: Bool

        static let refused = Rule(access: .refused, parameters: [], usesToken: false)
    }

    /// The JSON-RPC code of every refusal on the forward socket (`data.name` says which).
    public static let code = -51014

    /// The rule per method (the switch is exhaustive: a new method is refused here until it
    /// is given a rule).
    public static func rule(_ method: SidecarMethod) -> Rule {
        switch method {
        // The method's declared parameters (``SidecarMethod/parameters``) less what a
        // forwarded session may not set.
        case .initialize: Rule(access: .allowed, parameters: method.parameters.subtracting(["profile"]), usesToken: false)
        case .ping, .getDeviceInformation, .getCurrentAccount, .getAccounts:
            Rule(access: .allowed, parameters: method.parameters, usesToken: false)
        case .acquireTokenSilent:
            Rule(access: .allowed, parameters: method.parameters.subtracting(["sshCertificate", "proofOfPossession"]), usesToken: true)
        case .callGraph: Rule(access: .allowed, parameters: method.parameters, usesToken: true)
        case .acquireToken:
            Rule(
                access: .needsApproval,
                parameters: method.parameters.subtracting(["extraQueryParameters", "sshCertificate", "proofOfPossession"]), usesToken: true)
        // A PoP token's key never leaves this machine: no signing for a forwarded session.
        case .signHttpRequest: .refused
        case .signout, .setCurrentAccount, .getCacheSummary, .diagnosticsSleep, .diagnosticsEcho: .refused
        }
    }

    /// The rule per method when the agent's `forwardProofOfPossession` names hosts (`popOptIn`):
    /// `acquireTokenSilent` may carry `proofOfPossession` and `signHttpRequest` is allowed, for
    /// those hosts only (``popTargetRefused(_:hosts:)``); the SHR is made here, with the laptop's
    /// key, which never leaves. Without it, ``rule(_:)``: both refused.
    public static func rule(_ method: SidecarMethod, popOptIn: Bool) -> Rule {
        guard popOptIn else { return rule(method) }
        switch method {
        case .acquireTokenSilent: return Rule(access: .allowed, parameters: method.parameters.subtracting(["sshCertificate"]), usesToken: true)
        case .signHttpRequest: return Rule(access: .allowed, parameters: method.parameters, usesToken: true)
        default: return rule(method)
        }
    }

    /// The `forwardProofOfPossession` key's hosts, lower-cased: each `host` or `host:port` as
    /// a signed HTTP request's `u` names it (no scheme, path or wildcard).
    public static func popHosts(_ hosts: [String]?) throws(RPCError) -> [String]? {
        guard let hosts else { return nil }
        for host in hosts where host.isEmpty || host.contains(where: { "/*@ ?#".contains($0) }) {
            throw .invalidParams(
                "'forwardProofOfPossession' lists resource hosts (host or host:port, no scheme, path or wildcard); got \"\(host)\"",
                member: "forwardProofOfPossession")
        }
        return hosts.map { $0.lowercased() }
    }

    /// The resource host of a forwarded PoP request (`proofOfPossession.url`, or
    /// `signHttpRequest`'s `url`) when `hosts` does not list it: -51014 naming the key; `nil`
    /// when it may be signed (or the request asks for no PoP token). A URL that is not one is
    /// for the method's own check (-32602).
    public static func popTargetRefused(_ method: SidecarMethod, params: JSONValue?, hosts: Set<String>) -> RPCError? {
        let members = method == .signHttpRequest ? params : params?["proofOfPossession"]
        let target: PopRequestTarget? =
            if let resource = members?["resourceId"]?.stringValue { try? PopRequestTarget(resourceId: resource) } else {
                members?["url"]?.stringValue.flatMap { try? PopRequestTarget(method: "GET", url: $0) }
            }
        guard let target else { return nil }
        let host = target.hostAndPort.lowercased()
        guard !hosts.contains(host) else { return nil }
        return RPCError(
            code: code,
            message: "a proof-of-possession request for \(host) may not be signed through a forwarded agent: list the host in "
                + "forwardProofOfPossession in the configuration of the agent's machine",
            name: "forwardParameterRefused",
            data: ["member": "proofOfPossession", "method": .string(method.rawValue), "host": .string(host), "key": "forwardProofOfPossession"])
    }

    /// The rule per method: its access.
    public static func access(_ method: SidecarMethod) -> Access { rule(method).access }

    /// A method a forwarded session may not call (sign-out, switching the laptop's account).
    public static func methodRefused(_ method: String) -> RPCError {
        RPCError(
            code: code,
            message: "\(method) is not allowed through a forwarded agent: run it on the machine the agent runs on",
            name: "forwardMethodRefused", data: ["method": .string(method)])
    }

    /// A parameter a forwarded session may not set.
    public static func parameterRefused(_ member: String, method: String) -> RPCError {
        RPCError(
            code: code,
            message: "'\(member)' may not be set through a forwarded agent (\(method)): run it on the machine the agent runs on",
            name: "forwardParameterRefused", data: ["member": .string(member), "method": .string(method)])
    }

    /// Scopes outside the laptop's allow list (`scopes` empty: no `forwardScopes` at all).
    public static func scopesRefused(_ scopes: [String]) -> RPCError {
        guard !scopes.isEmpty else {
            return RPCError(
                code: code,
                message: "the forwarding agent hands out no token: forwardScopes is empty; list the scopes a forwarded "
                    + "session may have in forwardScopes in the configuration of the agent's machine",
                name: "forwardScopeRefused", data: ["scopes": [], "key": "forwardScopes"])
        }
        return RPCError(
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

    /// The agent's authority (its configuration's, else the default).
    public static func authority(of base: ConfigurationOverrides) -> String {
        base.authority ?? Configuration(clientId: base.clientId ?? "").authority
    }

    /// Whether `other` names the same authority as `authority` (case and a trailing slash
    /// ignored).
    public static func sameAuthority(_ other: String, _ authority: String) -> Bool {
        func normal(_ text: String) -> String { (text.hasSuffix("/") ? String(text.dropLast()) : text).lowercased() }
        return normal(other) == normal(authority)
    }

    /// The configuration a forwarded session runs with: the agent's own (`base`), never the
    /// remote's. The remote may repeat the agent's `clientId` and `authority` (it may not choose
    /// another application or authority: the laptop's refresh tokens would serve them) and
    /// choose its default `scopes` (still checked against `forwardScopes`); every other key it
    /// sends (the cache, key commands, the browser, time limits) is about its own machine and is
    /// not applied. Sign-ins open the laptop's browser (`browser` is `system`).
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
        let authority = authority(of: base)
        if let other = remote.authority, !sameAuthority(other, authority) {
            throw configurationRefused(
                "authority \(other) is not the forwarding agent's (\(authority)); a forwarded session uses the agent's", member: "authority")
        }
        if let scopes = remote.scopes { result.scopes = scopes }
        return result
    }
}
