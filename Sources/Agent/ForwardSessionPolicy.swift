import JSON
import JSONRPC
import Logging
import Loopback
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// The forward socket's stage of the request pipeline: ``ForwardPolicy``'s table applied to
/// every request and ``ForwardReply`` to every reply. Methods and parameters the table does not
/// name are refused; a token request is for its scopes or, naming no resource scope, the
/// session's default scopes, all within `forwardScopes`; a per-request `authority` only equal
/// to the agent's; a sign-in runs on the laptop (its browser) only once the laptop's user
/// approves (``ForwardApprover``), its device code shown on the laptop only; what leaves is
/// checked (a token beyond `forwardScopes` is asked for again with exactly the allowed scopes,
/// within the session's forced-refresh budget (``ForwardRefreshStage``), else refused; `callGraph`'s
/// token is checked before the call, ``ForwardGraphTokens``); nothing about the laptop leaves
/// (``ForwardDisclosure``: device information, paths in errors); each token handed out is one log line on the agent's stderr naming the
/// scopes of the token that left (time, the peer; never the token).
final class ForwardSessionPolicy: SessionPolicy {
    /// The agent's configuration (`--config`, flags), what the session runs with.
    private let base: ConfigurationOverrides
    private let scopes: ForwardScopes
    /// The hosts `forwardProofOfPossession` lists (empty: PoP refused, as ``ForwardPolicy/rule(_:)`` says).
    private let popHosts: Set<String>
    private let approver: ForwardApprover
    private let peer: ForwardPeer
    /// The agent's own log (its stderr), its lines summed up per peer (``SummarizedLogHandler``):
    /// sign-in requests, refusals.
    private let logger: Logger
    /// The agent's log as it is, and its summary: the line per token handed out is counted there
    /// directly (a line per reply, its detail made once, not through the summarizing handler).
    private let log: Logger
    private let summary: LogSummary
    private let peerName: String
    /// The scopes a request naming no resource scope is for (the session's default), set by
    /// `initialize`; under a lock: requests of one session run on several tasks.
    private let defaultScopes: PthreadMutex<[String]>
    /// The last token checked against `forwardScopes` and what it is for beyond them: most
    /// replies carry the same cached token, whose claims are then not decoded again.
    private let lastVerdict = PthreadMutex<Verdict?>(nil)
    /// The session's forced-refresh budget (shared with its `callGraph`'s token check).
    private let refreshes: ForwardRefreshStage

    private struct Verdict {
        let token: JSONValue?
        let scopes: JSONValue?
        let beyond: [String]
    }

    /// - Parameters:
    ///   - startup: the configuration the session starts with (the agent's, ``ForwardPolicy/configuration(remote:base:)``).
    ///   - log: the agent's log, for the lines about forwarded tokens and sign-ins.
    ///   - summary: where those lines are summed up per peer and minute.
    ///   - approvals: the agent's one-question-at-a-time gate for `forwardApproval`.
    init(
        base: ConfigurationOverrides, startup: ConfigurationOverrides, peer: ForwardPeer, log: Logger, summary: LogSummary,
        approvals: ApprovalGate, budget: ForwardRefreshBudget
    ) {
        refreshes = ForwardRefreshStage(budget: budget)
        self.base = base
        scopes = ForwardScopes(base.forwardScopes)
        popHosts = Set(base.forwardProofOfPossession ?? [])
        approver = ForwardApprover(setting: base.forwardApproval ?? .deny, gate: approvals)
        self.peer = peer
        self.log = log
        self.summary = summary
        peerName = peer.description
        logger = log.summarized(by: summary)
        defaultScopes = PthreadMutex(Self.scopes(of: startup))
    }

    var seesReplies: Bool { true }

    func asksConsent(_ method: SidecarMethod) -> Bool { ForwardPolicy.access(method) == .needsApproval }

    func admit(_ method: SidecarMethod, params: JSONValue?) throws(RPCError) -> JSONValue? {
        let rule = ForwardPolicy.rule(method, popOptIn: !popHosts.isEmpty)
        guard rule.access != .refused else { throw ForwardPolicy.methodRefused(method.rawValue) }
        if case .object(let members)? = params, let member = members.keys.sorted().first(where: { !rule.parameters.contains($0) }) {
            throw ForwardPolicy.parameterRefused(member, method: method.rawValue)
        }
        if method == .initialize { return try initializeParams(params) }
        if let authority = params?["authority"], authority.stringValue.map({ ForwardPolicy.sameAuthority($0, agentAuthority) }) != true {
            throw ForwardPolicy.configurationRefused(
                "authority \(authority.stringValue ?? "?") is not the forwarding agent's (\(agentAuthority)); a forwarded session uses the agent's",
                member: "authority")
        }
        guard rule.usesToken else { return params }
        if !popHosts.isEmpty, let refused = ForwardPolicy.popTargetRefused(method, params: params, hosts: popHosts) {
            logger.notice("refused a forwarded proof-of-possession request", metadata: ["host": "\(refused.data["host"]?.stringValue ?? "")"])
            throw refused
        }
        let checked = try withCheckedScopes(params)
        return method == .acquireTokenSilent ? refreshes.admitted(checked) : checked
    }

    func approve(_ method: SidecarMethod, params: JSONValue?) async throws(RPCError) {
        if method == .acquireTokenSilent { refreshes.spend(params) }  // a forced refresh about to run
        guard asksConsent(method) else { return }
        let requested = params?["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let question = ForwardApprovalQuestion.text(
            params: params, scopes: requested, authority: agentAuthority, command: peer.command, pid: peer.pid)
        logger.notice(
            "a forwarded session asks to sign in", metadata: ["scopes": "\(requested.joined(separator: " "))", "peer": "\(peer.description)"])
        if let reason = await approver.refusal(for: question) {
            logger.notice("forwarded sign-in refused", metadata: ["reason": "\(reason)"])
            throw ForwardPolicy.signInRefused(reason)
        }
    }

    func channel(_ method: SidecarMethod, _ context: RequestContext) -> RequestContext {
        RequestContext(id: context.id, peer: LaptopOnlyChannel(logger: logger))
    }

    func release(_ method: SidecarMethod, params: JSONValue?, result: JSONValue) throws(RPCError) -> ReplyDecision {
        switch method {
        case .initialize:
            return .send(
                ForwardReply.initialize(
                    result, scopes: scopes, signIn: approver.setting == .deny ? "deny" : "approval", popHosts: popHosts.sorted()))
        case .getAccounts: return .send(ForwardReply.allowed(result, fields: ["accounts"]))
        case .getCurrentAccount: return .send(ForwardReply.allowed(result, fields: ["account", "previousAccount"]))
        case .acquireTokenSilent, .acquireToken:
            let beyond = beyondScopes(result)
            if method == .acquireTokenSilent { refreshes.spend(params) }
            if !beyond.isEmpty, method == .acquireTokenSilent, params?["forceRefresh"]?.boolValue != true, case .object(var members)? = params,
                refreshes.mayAskAgain(params)
            {
                // A cached token for more than the request (the cache's superset lookup): a fresh one for exactly these scopes.
                members["forceRefresh"] = true
                return .askAgain(.object(members))
            }
            if !beyond.isEmpty {
                logger.notice("refused a forwarded token beyond forwardScopes", metadata: ["scopes": "\(beyond.joined(separator: " "))"])
            }
            return .send(try ForwardReply.token(result, beyond: beyond))
        case .getDeviceInformation: return .send(ForwardDisclosure.deviceInformation(result))
        case .callGraph, .ping: return .send(result)
        case .signHttpRequest where !popHosts.isEmpty:
            return .send(try ForwardReply.signedRequest(result, requested: try stringList(params, "scopes") ?? [], within: scopes))
        case .signout, .setCurrentAccount, .getCacheSummary, .signHttpRequest, .diagnosticsSleep, .diagnosticsEcho:
            throw ForwardPolicy.methodRefused(method.rawValue)
        }
    }

    var releasesErrors: Bool { true }

    /// Errors name no laptop file (``ForwardDisclosure``); the agent's log has them whole.
    func releaseError(_ method: SidecarMethod, _ error: RPCError) -> RPCError {
        let released = ForwardDisclosure.error(error)
        if released != error { logger.info("a forwarded request failed", metadata: ["method": "\(method.rawValue)", "error": "\(error.message)"]) }
        return released
    }

    func audit(_ method: SidecarMethod, params: JSONValue?, result: JSONValue) {
        guard ForwardPolicy.rule(method, popOptIn: !popHosts.isEmpty).usesToken else { return }
        let source = method == .callGraph || method == .signHttpRequest ? params?["scopes"] : result["scopes"]
        logHandedOut(method.rawValue, source?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    /// ``ForwardReply/beyondScopes(_:_:)`` for `result`, kept for the last token seen.
    private func beyondScopes(_ result: JSONValue) -> [String] {
        let token = result["accessToken"]
        let listed = result["scopes"]
        if let last = lastVerdict.withLock({ $0 }), last.token == token, last.scopes == listed { return last.beyond }
        let beyond = ForwardReply.beyondScopes(result, scopes)
        lastVerdict.withLock { $0 = Verdict(token: token, scopes: listed, beyond: beyond) }
        return beyond
    }

    private var agentAuthority: String { ForwardPolicy.authority(of: base) }

    /// The agent's configuration with the remote's default scopes (``ForwardPolicy/configuration(remote:base:)``).
    private func initializeParams(_ params: JSONValue?) throws(RPCError) -> JSONValue? {
        let remote = try ConfigurationOverrides(params: params, alsoAllowed: SidecarService.editorInitializeKeys)
        let chosen = try ForwardPolicy.configuration(remote: remote, base: base)
        defaultScopes.withLock { $0 = Self.scopes(of: chosen) }
        return chosen.json
    }

    /// `params` with `scopes` made explicit (the request's, else the session's default scopes)
    /// once every scope, `extraScopesToConsent` too, is within `forwardScopes`.
    private func withCheckedScopes(_ params: JSONValue?) throws(RPCError) -> JSONValue? {
        let requested = try stringList(params, "scopes")
        let effective = ForwardScopes.requestScopes(requested, defaults: defaultScopes.withLock { $0 })
        let asked = effective + (try stringList(params, "extraScopesToConsent") ?? [])
        let unlisted = scopes.unlisted(asked)
        guard !scopes.allowed.isEmpty, unlisted.isEmpty else {
            logger.notice("refused a forwarded token request", metadata: ["scopes": "\(unlisted.joined(separator: " "))"])
            throw ForwardPolicy.scopesRefused(scopes.allowed.isEmpty ? [] : unlisted)
        }
        var members = params?.objectValue ?? [:]
        members["scopes"] = JSONValue(effective)
        return .object(members)
    }

    private func stringList(_ params: JSONValue?, _ key: String) throws(RPCError) -> [String]? {
        guard let value = params?[key], !value.isNull else { return nil }
        guard let items = value.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
            throw .invalidParams("'\(key)' must be an array of strings", member: key)
        }
        return items.compactMap(\.stringValue)
    }

    private func logHandedOut(_ method: String, _ scopes: [String]) {
        let scopes = scopes.joined(separator: " ")
        // The summary's detail as SummarizedLogHandler makes it: the metadata but peer and time, by key.
        guard summary.count(Self.handedOut, peer: peerName, detail: "method=\(method) scopes=\(scopes)") else { return }
        log.notice(
            "\(Self.handedOut)",
            metadata: [
                "method": "\(method)", "scopes": "\(scopes)", "time": "\(utcTimestamp(Int64(time(nil))))", "peer": "\(peerName)",
            ])
    }

    private static let handedOut = "token handed out through the forward socket"

    private static func scopes(of configuration: ConfigurationOverrides) -> [String] {
        configuration.scopes ?? Configuration(clientId: "").scopes
    }
}

/// A forwarded request's messages to the client, kept on the laptop: a sign-in's device code
/// is shown on the agent's stderr only (the laptop's user enters it, not whoever reads the
/// remote first); nothing else is sent, and the engine may not ask the remote anything (the
/// laptop's browser opens sign-ins).
private struct LaptopOnlyChannel: PeerChannel {
    let logger: Logger

    func notify(_ method: String, params: JSONValue) {
        if method == "deviceCode", let message = params["message"]?.stringValue {
            logger.notice("forwarded sign-in: \(message)")
        }
    }

    func request(_ method: String, params: JSONValue) async throws -> JSONValue {
        throw RPCError.methodNotFound(method)
    }
}
