import JSON
import JSONRPC
import Logging
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// A forward-socket session: the same engine (``SidecarService``) under ``ForwardPolicy``.
/// Methods that change the laptop are refused; every token request's scopes must be in the
/// agent's `forwardScopes`; a sign-in runs on the laptop (its browser) only once the
/// laptop's user approves it (``ForwardApprover``); replies lose the raw ID token and the ID
/// token claims; each token handed out is one log line on the agent's stderr (scopes, time,
/// the peer; never the token).
final class ForwardedService: RPCService, Sendable {
    private let inner: SidecarService
    /// The agent's configuration (`--config`, flags), what this session runs with.
    private let base: ConfigurationOverrides
    private let approver: ForwardApprover
    private let peer: ForwardPeer
    /// The agent's own log (its stderr): sign-in requests and every token handed out.
    private let logger: Logger
    /// The scopes a request without `scopes` is for (the session's default).
    private let defaultScopes: PthreadMutex<[String]>

    /// - Parameters:
    ///   - preamble: the remote stdio relay's configuration (``StartupPreamble``), if it sent one.
    ///   - logger: the session's log; `audit`: the agent's, for the lines about forwarded tokens.
    ///   - approvals: the agent's one-question-at-a-time gate for `forwardApproval`.
    /// - Throws: ``ForwardPolicy/configurationRefused(_:member:)`` for a preamble naming
    ///   another application or authority.
    init(
        options: SidecarService.Options, base: ConfigurationOverrides, preamble: ConfigurationOverrides?, peer: ForwardPeer,
        logger: Logger, audit: Logger, approvals: ApprovalGate
    ) throws(RPCError) {
        var startup = base
        startup.browser = .system
        if let preamble { startup = try ForwardPolicy.configuration(remote: preamble, base: base) }
        var options = options
        options.startup = startup
        inner = try SidecarService(options: options, logger: logger)
        self.base = base
        approver = ForwardApprover(setting: base.forwardApproval ?? .deny, gate: approvals)
        self.peer = peer
        self.logger = audit
        defaultScopes = PthreadMutex(Self.scopes(of: startup))
    }

    func route(forRequest name: String) -> RPCRoute {
        guard let method = SidecarMethod(rawValue: name) else { return inner.route(forRequest: name) }
        let access = ForwardPolicy.access(method)
        if access == .refused { return .failure(ForwardPolicy.methodRefused(name)) }
        var route = inner.route(forRequest: name)
        // The engine's quick path answers from memory before any wrapper below could look at the
        // request: a forwarded session never takes it (fail closed), each request goes through
        // the policy as a task.
        if case .quickOrConcurrent(_, let run) = route { route = .concurrent(run) }
        switch (method, route) {
        case (.initialize, .immediate(let run)):
            return .immediate { [self] params in
                let remote = try ConfigurationOverrides(params: params, alsoAllowed: SidecarService.editorInitializeKeys)
                let chosen = try ForwardPolicy.configuration(remote: remote, base: base)
                let result = try run(chosen.json)
                defaultScopes.withLock { $0 = Self.scopes(of: chosen) }
                return ForwardPolicy.advertised(result)
            }
        case (.getAccounts, .concurrent(let run)), (.getCurrentAccount, .concurrent(let run)):
            return .concurrent { params, context in ForwardPolicy.redact(try await run(params, context)) }
        case (.acquireTokenSilent, .concurrent(let run)), (.callGraph, .concurrent(let run)):
            return .concurrent { [self] params, context in
                let scopes = try allowedScopes(params)
                let result = try await run(params, context)
                logHandedOut(name, scopes)
                return method == .callGraph ? result : ForwardPolicy.redact(result)
            }
        case (.acquireToken, .concurrent(let run)):
            return .concurrent { [self] params, context in
                let scopes = try allowedScopes(params, also: "extraScopesToConsent")
                let flow = params?["flow"]?.stringValue ?? "browser"
                let question =
                    "auth-sidecar: a forwarded session (\(peer.description)) asks to sign in on this machine "
                    + "(\(flow == "deviceCode" ? "device code" : "browser")) for: \(scopes.joined(separator: " ")). Allow?"
                logger.notice(
                    "a forwarded session asks to sign in", metadata: ["scopes": "\(scopes.joined(separator: " "))", "peer": "\(peer.description)"])
                if let reason = await approver.refusal(for: question) {
                    logger.notice("forwarded sign-in refused", metadata: ["reason": "\(reason)"])
                    throw ForwardPolicy.signInRefused(reason)
                }
                let shown = RequestContext(id: context.id, peer: LaptopEcho(context: context, logger: logger))
                let result = try await run(params, shown)
                logHandedOut(name, scopes)
                return ForwardPolicy.redact(result)
            }
        default:
            return route
        }
    }

    func receiveNotification(_ method: String, params: JSONValue?) {
        inner.receiveNotification(method, params: params)
    }

    func serverWillStop() {
        inner.serverWillStop()
    }

    /// The scopes the request is for, when `forwardScopes` lists them all; else the refusal.
    private func allowedScopes(_ params: JSONValue?, also extra: String? = nil) throws(RPCError) -> [String] {
        var scopes = params?["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? defaultScopes.withLock { $0 }
        if let extra { scopes += params?[extra]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        let unlisted = ForwardPolicy.unlisted(scopes, allowed: base.forwardScopes ?? [])
        guard unlisted.isEmpty else {
            logger.notice("refused a forwarded token request", metadata: ["scopes": "\(unlisted.joined(separator: " "))"])
            throw ForwardPolicy.scopesRefused(unlisted)
        }
        return scopes
    }

    private func logHandedOut(_ method: String, _ scopes: [String]) {
        logger.notice(
            "token handed out through the forward socket",
            metadata: [
                "method": "\(method)", "scopes": "\(scopes.joined(separator: " "))", "time": "\(utcTimestamp(Int64(time(nil))))",
                "peer": "\(peer.description)",
            ])
    }

    private static func scopes(of configuration: ConfigurationOverrides) -> [String] {
        configuration.scopes ?? Configuration(clientId: "").scopes
    }
}

/// A forwarded sign-in's messages to the remote, with the device code also shown on the
/// laptop (the agent's stderr), where the user signs in.
private struct LaptopEcho: PeerChannel {
    let context: RequestContext
    let logger: Logger

    func notify(_ method: String, params: JSONValue) {
        if method == "deviceCode", let message = params["message"]?.stringValue {
            logger.notice("forwarded sign-in: \(message)")
        }
        context.notify(method, params: params)
    }

    func request(_ method: String, params: JSONValue) async throws -> JSONValue {
        try await context.request(method, params: params)
    }
}
