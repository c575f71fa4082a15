import Composition
import JSON
import JSONRPC
import Logging
import Loopback
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// `auth-sidecar agent`: the stdio protocol on a Unix socket, for every program of the user.
///
/// Each connection is its own JSON-RPC session (framing detected per connection, its own
/// `initialize`, its notifications and server requests), but sessions configured alike share
/// one engine (``ApplicationRegistry``): one in-memory cache, one refresh per token. Only the
/// socket's owner may connect (directory 0700, socket 0600, and the peer's uid checked, before
/// the connection counts). Accepting is Loopback's ``AcceptLoop``: at most
/// ``Options/maxConnections`` connections, fewer when the descriptor limit leaves room for
/// fewer (``Options/descriptorReserve`` stays free for the cache, libcurl and the engine); at
/// the cap, the oldest connection that has sent no complete message yet, else the session idle
/// the longest, else the initialized session idle the longest, is closed to make room (its
/// client reconnects), and only when every session has something in flight is the new one
/// refused with a JSON-RPC error line; a rest at EMFILE/ENFILE. On the forward socket one peer
/// process holds at most ``forwardPeerShare`` connections (at its share, it makes room among its
/// own). A connection with no complete message within ``Options/firstMessageDeadline`` is
/// closed, and so is a session that never sent `initialize` once idle for
/// ``Options/sessionIdleLimit``; a session with requests in flight is never closed, and one an
/// editor or client library initialized (it may wait hours for its next request) only at the cap. Refusals, evictions and the forward socket's audit are
/// logged once per peer per minute (``LogSummary``).
///
/// With ``Options/forwardSocketPath``, a second socket (same rules, its own accept loop) serves
/// sessions meant to be forwarded (`ssh -R`, a container mount): the same engine under
/// `ForwardPolicy` (``ForwardSessionPolicy``, a stage of the request pipeline).
public final class AgentServer: Sendable {
    public struct Options: Sendable {
        public var socketPath: String
        /// Exit after this long with no connection; `nil`: never.
        public var idleTimeout: Duration?
        /// Configuration every session starts with (`--config`, flags), before its own.
        public var startup = ConfigurationOverrides()
        /// The profile ``startup`` is (`nil`: a flat file, or none).
        public var startupProfile: String?
        /// Every profile of the configuration file: a session's `initialize` (or preamble)
        /// `profile` chooses one, so the agent serves them all at once.
        public var profiles = ProfileTable()
        public var maxMessageSize = 4 << 20
        /// How long SIGTERM lets requests in flight finish before cancelling them.
        public var drainTimeout: Duration = .seconds(10)
        /// The most sessions open at once (each costs a descriptor and two threads); fewer
        /// when the descriptor limit less ``descriptorReserve`` is lower.
        public var maxConnections = 512
        /// Descriptors never used for connections: the cache and its lock, libcurl's sockets
        /// and certificates, the concurrency runtime, a spawned browser's pipes.
        public var descriptorReserve = 24
        /// From accept to a connection's first complete message (or preamble line). A client
        /// may connect before it has anything to ask (an editor at start-up), so this is
        /// generous; at the cap, silent connections are closed first anyway.
        public var firstMessageDeadline: Duration = .seconds(30)
        /// A session that never sent `initialize` is closed once idle (nothing in flight)
        /// this long.
        public var sessionIdleLimit: Duration = .seconds(300)
        /// The forward socket (`--forward`, `--forward-socket`), the one meant for `ssh -R` and
        /// containers, served under ``ForwardPolicy``; `nil`: none (the default).
        public var forwardSocketPath: String?
        /// The auth dependencies of every session instead of the live ones (tests).
        public var dependencies: SidecarService.DependencyFactory?

        public init(socketPath: String) { self.socketPath = socketPath }
    }

    private struct State {
        var connections: [Int: Connection] = [:]
        var nextId = 0
        var idleSince = ContinuousClock.now
        var stopping = false
    }

    private struct Connection: Sendable {
        let fd: Int32
        let server: JSONRPCServer
        /// Who is at the other end of a forward-socket connection; `nil` on the main socket.
        let forwarded: ForwardPeer?
    }

    private let options: Options
    private let logger: Logger
    private let applications = ApplicationRegistry()
    private let approvals = ApprovalGate()
    /// Refusals, evictions and forwarded tokens, said once per peer per minute.
    private let summary: LogSummary
    private let state = PthreadMutex(State())
    /// When this agent started (seconds since the epoch), for `initialize`'s `agent`.
    private let startedAt = Int64(time(nil))

    public init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
        summary = LogSummary(logger: logger)
    }

    /// The connection cap in force: ``Options/maxConnections``, or what the descriptor limit
    /// leaves room for.
    public var connectionCap: Int {
        ServerLimits.connections(options.maxConnections, descriptorLimit: DescriptorLimit.current, reserve: options.descriptorReserve)
    }

    /// Listens until ``stop()`` or the idle timeout; then lets requests finish, removes the
    /// socket and returns.
    public func run() throws(AgentError) {
        let socket = try AgentSocket(path: options.socketPath)
        let forwardSocket: AgentSocket?
        do throws(AgentError) {
            forwardSocket = try options.forwardSocketPath.map { path throws(AgentError) in try AgentSocket(path: path) }
        } catch {
            socket.remove()
            throw error
        }
        defer {
            socket.remove()
            forwardSocket?.remove()
        }
        ConcurrencyWarmUp.run()
        logger.notice("agent listening", metadata: ["socket": "\(socket.path)", "pid": "\(getpid())", "maxConnections": "\(connectionCap)"])
        let loop = try acceptLoop(socket)
        let forwardLoop = try forwardSocket.map { socket throws(AgentError) in try acceptLoop(socket, perPeerShare: forwardPeerShare) }
        let forwardDone = PthreadMutex(forwardLoop == nil)
        if let forwardLoop, let forwardSocket {
            logger.notice("forward socket listening (tokens for forwardScopes only)", metadata: ["socket": "\(forwardSocket.path)"])
            if (options.startup.forwardScopes ?? []).isEmpty {
                logger.warning("forwardScopes is empty: the forward socket hands out no token; list the scopes in the configuration")
            }
            if options.startup.clientId == nil {
                logger.warning("no clientId configured: forwarded sessions are refused until the agent's configuration names one")
            }
            do {
                try POSIX.startThread { [self] in
                    forwardLoop.run(
                        while: { !self.isStopping && !self.idleTimedOut() }, admit: admit, refuse: refuseBusy,
                        serve: { [self] connection in serve(connection, forwarded: true) })
                    forwardDone.withLock { $0 = true }
                }
            } catch {
                throw AgentError("cannot start accepting forwarded connections: \(error)")
            }
        }
        loop.run(
            while: { !isStopping && !idleTimedOut() }, admit: admit, refuse: refuseBusy,
            serve: { [self] connection in serve(connection, forwarded: false) })
        forwardLoop?.stop()
        while !forwardDone.withLock({ $0 }) { usleep(10_000) }
        drain()
        logger.notice("agent stopped")
    }

    /// The most connections one peer process (an `ssh -R`, a container's process) holds on the
    /// forward socket: half the cap, so one tunnel never takes every slot.
    var forwardPeerShare: Int { max(1, connectionCap / 2) }

    private func acceptLoop(_ socket: AgentSocket, perPeerShare: Int? = nil) throws(AgentError) -> AcceptLoop {
        let limits = ServerLimits(
            maxConnections: connectionCap, atCapacity: .evictOldestWaiting, requestDeadline: options.firstMessageDeadline,
            descriptorReserve: options.descriptorReserve, idleLimit: options.sessionIdleLimit, perPeerShare: perPeerShare)
        do {
            return try AcceptLoop(listenFD: socket.fd, limits: limits, logger: logger, summary: summary)
        } catch {
            throw AgentError("cannot start accepting connections: \(error)")
        }
    }

    /// What `initialize` tells a session about this agent: its pid, start, connections and engines, the
    /// forward socket and the forwarded sessions open now; a forwarded session is told only that
    /// it is forwarded (``ForwardReply/initialize(_:scopes:signIn:)``: nothing about the laptop).
    private func agentInfo(forwarded: Bool) -> JSONValue {
        if forwarded { return ["forwarded": true] }
        let sessions = state.withLock { $0.connections.values.compactMap(\.forwarded) }.sorted { $0.since < $1.since }
        return [
            "pid": .int(Int64(getpid())), "startedAt": .int(startedAt), "connections": .int(Int64(connectionCount)),
            "engines": .int(Int64(applications.count)), "forwarded": false,
            "forwardSocket": JSONValue(options.forwardSocketPath),
            "forwardedSessions": .array(
                sessions.map { ["since": .string(utcTimestamp($0.since)), "peer": .string($0.command), "pid": .int(Int64($0.pid))] }),
        ]
    }

    /// Asks ``run()`` to finish (from a signal handler thread).
    public func stop() {
        state.withLock { $0.stopping = true }
    }

    /// Connections open now.
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func idleTimedOut() -> Bool {
        guard let limit = options.idleTimeout else { return false }
        return state.withLock { $0.connections.isEmpty && ContinuousClock.now - $0.idleSince >= limit }
    }

    /// Only the socket's owner; another user's connection is closed before it takes a slot.
    private func admit(_ fd: Int32) -> Bool {
        guard let peer = PeerCredentials(socket: fd), peer.uid == getuid() else {
            let other = PeerCredentials(socket: fd)
            summary.record(
                "refused a connection from another user", peer: "uid \(other?.uid ?? 0) pid \(other?.pid ?? 0)", level: .warning)
            return false
        }
        return true
    }

    private func refuseBusy(_ fd: Int32) {
        StartupPreamble.refuse(
            fd,
            RPCError(
                code: -32000, message: "the agent serves at most \(connectionCap) connections at once; close one and retry",
                name: "tooManyConnections"))
    }

    private func serve(_ connection: AcceptLoop.Connection, forwarded: Bool) {
        let fd = connection.fd
        guard let peer = PeerCredentials(socket: fd) else { return }
        // Waiting (closed at the deadline, evicted first) until the session has a server; then
        // what the server says.
        let session = PthreadMutex<JSONRPCServer?>(nil)
        connection.track { session.withLock { $0 }.map(Self.activity) ?? .waiting }
        if !forwarded, ForwardPeer.isSSH(peer.pid) {
            summary.record(
                """
                a connection on the agent socket comes through ssh: the main socket is forwarded with everything the agent can \
                do; forward the forward socket instead (agent --forward), which hands out access tokens for forwardScopes only
                """, peer: "pid \(peer.pid)", level: .warning)
        }
        serveSession(fd, peer: peer, forwarded: forwarded ? ForwardPeer(pid: peer.pid) : nil, session: session)
    }

    /// A session as the accept loop sees it: waiting for its first message, held (busy), kept
    /// (initialized, nothing in flight: an editor; evicted at the cap after the idle ones), or idle.
    private static func activity(_ server: JSONRPCServer) -> SessionActivity {
        let activity = server.activity
        if !activity.receivedMessage { return .waiting }
        if activity.busy { return .held }
        if activity.initialized { return .kept(since: activity.idleSince) }
        return .idle(since: activity.idleSince)
    }

    /// The agent's own engine, for its in-process callers (the SSH keeper), called directly: a
    /// session under the main socket's rules with the agent's configuration, sharing the
    /// agent's engines (cache, refreshes) with every connection.
    public func ownEngine() throws(RPCError) -> LocalEngineClient {
        var serviceOptions = SidecarService.Options(
            policy: LocalSettingsPolicy(agent: options.startup, profiles: options.profiles),
            dependencies: options.dependencies ?? ApplicationFactory.live)
        serviceOptions.applications = applications
        serviceOptions.maxMessageSize = options.maxMessageSize
        serviceOptions.startup = options.startup
        serviceOptions.startupProfile = options.startupProfile
        serviceOptions.profiles = options.profiles
        return LocalEngineClient(service: try SidecarService(options: serviceOptions, logger: logger))
    }

    private func serveSession(
        _ fd: Int32, peer: PeerCredentials, forwarded: ForwardPeer?, session: PthreadMutex<JSONRPCServer?>
    ) {
        /// The session's options, under the rules of its door.
        func sessionOptions(_ policy: any SessionPolicy) -> SidecarService.Options {
            var serviceOptions = SidecarService.Options(policy: policy, dependencies: options.dependencies ?? ApplicationFactory.live)
            serviceOptions.applications = applications
            serviceOptions.maxMessageSize = options.maxMessageSize
            serviceOptions.agentInfo = { [self] in agentInfo(forwarded: forwarded != nil) }
            return serviceOptions
        }
        let connectionLogger = Logger(label: "auth-sidecar.agent.\(peer.pid)")
        let service: any RPCService
        do throws(RPCError) {
            let own = try StartupPreamble.read(from: fd)
            if let forwarded {
                summary.record("forwarded session opened", peer: forwarded.description)
                var startup = options.startup
                startup.browser = .system
                if let remote = own?.overrides { startup = try ForwardPolicy.configuration(remote: remote, base: options.startup) }
                let budget = ForwardRefreshBudget()
                var serviceOptions = sessionOptions(
                    ForwardSessionPolicy(
                        base: options.startup, startup: startup, peer: forwarded, log: logger, summary: summary, approvals: approvals,
                        budget: budget))
                serviceOptions.startup = startup
                serviceOptions.graphTokens = ForwardGraphTokens(scopes: ForwardScopes(options.startup.forwardScopes), budget: budget)
                service = try SidecarService(options: serviceOptions, logger: connectionLogger)
            } else {
                let given = own?.overrides ?? ConfigurationOverrides()
                // Whoever the peer is (its name proves nothing): what runs or reads as the user
                // comes from the agent's own configuration only.
                let local = LocalSettingsPolicy(agent: options.startup, profiles: options.profiles)
                try local.check(given, profile: own?.profile)
                var serviceOptions = sessionOptions(local)
                serviceOptions.startup = given.merged(
                    over: try options.profiles.base(profile: own?.profile, given: given, startup: options.startup))
                serviceOptions.startupProfile = own?.profile ?? options.startupProfile
                serviceOptions.profiles = options.profiles
                service = try SidecarService(options: serviceOptions, logger: connectionLogger)
            }
        } catch {
            StartupPreamble.refuse(fd, forwarded == nil ? error : ForwardDisclosure.error(error))
            summary.record("refused a connection's configuration", peer: "pid \(peer.pid)", detail: error.message, level: .warning)
            return
        }
        var serverOptions = JSONRPCServer.Options(maxMessageSize: options.maxMessageSize)
        serverOptions.readerMayWait = false  // the engine is shared: a busy cache means a task
        serverOptions.readerYields = true  // one session's client does not keep a core to itself
        let server = JSONRPCServer(service: service, options: serverOptions, logger: connectionLogger)
        session.withLock { $0 = server }
        let id = state.withLock { state in
            defer { state.nextId += 1 }
            state.connections[state.nextId] = Connection(fd: fd, server: server, forwarded: forwarded)
            return state.nextId
        }
        logger.debug("connection opened", metadata: ["pid": "\(peer.pid)"])
        _ = server.run(input: fd, output: fd)
        state.withLock { state in
            state.connections[id] = nil
            if state.connections.isEmpty { state.idleSince = .now }
        }
        logger.debug("connection closed", metadata: ["pid": "\(peer.pid)"])
        if let forwarded { summary.record("forwarded session closed", peer: forwarded.description) }
    }

    /// Stops reading every connection (requests in flight finish and are answered), waits up
    /// to the drain timeout, then cancels what is left (-32800).
    private func drain() {
        let open = state.withLock { Array($0.connections.values) }
        for connection in open { shutdown(connection.fd, Int32(SHUT_RD)) }
        let deadline = ContinuousClock.now + options.drainTimeout
        while connectionCount > 0, ContinuousClock.now < deadline { usleep(20_000) }
        for connection in state.withLock({ Array($0.connections.values) }) { connection.server.cancelAllAndStop() }
        summary.flush()
    }
}
