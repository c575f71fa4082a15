import JSON
import JSONRPC
import Logging
import POSIXSupport
import Sidecar
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `auth-sidecar agent`: the stdio protocol on a Unix socket, for every program of the user.
///
/// Each connection is its own JSON-RPC session (framing detected per connection, its own
/// `initialize`, its notifications and server requests), but sessions configured alike share
/// one engine (``ApplicationRegistry``): one in-memory cache, one refresh per token. Only the
/// socket's owner may connect (directory 0700, socket 0600, and the peer's uid checked).
public final class AgentServer: Sendable {
    public struct Options: Sendable {
        public var socketPath: String
        /// Exit after this long with no connection; `nil`: never.
        public var idleTimeout: Duration?
        /// Configuration every session starts with (`--config`, flags), before its own.
        public var startup = ConfigurationOverrides()
        public var maxMessageSize = 4 << 20
        /// How long SIGTERM lets requests in flight finish before cancelling them.
        public var drainTimeout: Duration = .seconds(10)

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
    }

    private let options: Options
    private let logger: Logger
    private let applications = ApplicationRegistry()
    private let state = Mutex(State())

    public init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    /// Listens until ``stop()`` or the idle timeout; then lets requests finish, removes the
    /// socket and returns.
    public func run() throws(AgentError) {
        let socket = try AgentSocket(path: options.socketPath)
        logger.notice("agent listening", metadata: ["socket": "\(socket.path)", "pid": "\(getpid())"])
        while !isStopping, !idleTimedOut() {
            var poller = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 250) > 0 else { continue }
            let client = accept(socket.fd, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            admit(client)
        }
        drain()
        socket.remove()
        logger.notice("agent stopped")
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

    private func admit(_ fd: Int32) {
        guard let peer = PeerCredentials(socket: fd), peer.uid == getuid() else {
            logger.warning("refused a connection from another user", metadata: ["uid": "\(PeerCredentials(socket: fd)?.uid ?? 0)"])
            close(fd)
            return
        }
        do {
            try POSIX.startThread { [self] in serve(fd, peer: peer) }
        } catch {
            logger.error("cannot start a thread for a connection", metadata: ["error": "\(error)"])
            close(fd)
        }
    }

    private func serve(_ fd: Int32, peer: PeerCredentials) {
        defer { close(fd) }
        var serviceOptions = SidecarService.Options()
        serviceOptions.applications = applications
        let connectionLogger = Logger(label: "auth-sidecar.agent.\(peer.pid)")
        let service: SidecarService
        do throws(RPCError) {
            let own = try StartupPreamble.read(from: fd) ?? ConfigurationOverrides()
            serviceOptions.startup = own.merged(over: options.startup)
            service = try SidecarService(options: serviceOptions, logger: connectionLogger)
        } catch {
            StartupPreamble.refuse(fd, error)
            logger.warning("refused a connection's configuration", metadata: ["error": "\(error.message)"])
            return
        }
        let server = JSONRPCServer(service: service, options: .init(maxMessageSize: options.maxMessageSize), logger: connectionLogger)
        let id = state.withLock { state in
            defer { state.nextId += 1 }
            state.connections[state.nextId] = Connection(fd: fd, server: server)
            return state.nextId
        }
        logger.debug("connection opened", metadata: ["pid": "\(peer.pid)"])
        _ = server.run(input: fd, output: fd)
        state.withLock { state in
            state.connections[id] = nil
            if state.connections.isEmpty { state.idleSince = .now }
        }
        logger.debug("connection closed", metadata: ["pid": "\(peer.pid)"])
    }

    /// Stops reading every connection (requests in flight finish and are answered), waits up
    /// to the drain timeout, then cancels what is left (-32800).
    private func drain() {
        let open = state.withLock { Array($0.connections.values) }
        for connection in open { shutdown(connection.fd, Int32(SHUT_RD)) }
        let deadline = ContinuousClock.now + options.drainTimeout
        while connectionCount > 0, ContinuousClock.now < deadline { usleep(20_000) }
        for connection in state.withLock({ Array($0.connections.values) }) { connection.server.cancelAllAndStop() }
    }
}
