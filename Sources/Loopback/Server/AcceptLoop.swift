import AuthSeams
import Logging
import POSIXSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The accept part every local endpoint shares (the agent's Unix socket, the loopback HTTP
/// servers): accept on a listening socket, close-on-exec; rest at EMFILE/ENFILE instead of
/// spinning; at most ``ServerLimits/maxConnections`` at once (the rest refused or the oldest
/// waiting one evicted); a thread per admitted connection.
///
/// ```swift
/// let loop = AcceptLoop(listenFD: fd, limits: limits, logger: logger)
/// loop.run(while: { !stopping }, refuse: { fd in sendBusy(fd) }) { connection in
///     serve(connection.fd); connection.markAnswering() // ...
/// }
/// ```
public final class AcceptLoop: Sendable {
    /// An admitted connection, handed to the serving closure on its own thread. The loop
    /// closes the descriptor when the closure returns.
    public struct Connection: Sendable {
        public let fd: Int32
        /// When its request must be in (``POSIX/monotonicMilliseconds()``): accept time plus
        /// ``ServerLimits/requestDeadline``.
        public let deadline: Int64
        let id: Int
        let table: ConnectionTable

        /// The request is in and being answered: the connection is no longer evicted.
        public func markAnswering() { table.markAnswering(id) }

        /// From now on `activity` says what the connection does (a session of many requests):
        /// ``SessionActivity/waiting`` past the request deadline, or idle past
        /// ``ServerLimits/idleLimit``, the loop closes it (`shutdown`: its reads end); at the
        /// cap, a waiting or idle one makes room. Called under the loop's lock: it must be
        /// quick and must not call back into the loop.
        public func track(_ activity: @escaping @Sendable () -> SessionActivity) { table.track(id, activity) }
    }

    public let limits: ServerLimits
    private let listenFD: Int32
    private let logger: Logger
    private let table = ConnectionTable()
    /// Refusals, evictions and late or idle connections, said once per peer per interval.
    public let summary: LogSummary
    private let stopping = Atomic<Bool>(false)
    /// A socket pair: ``stop()`` writes a byte to `wake.write`, so `run` returns at once.
    private let wake: (read: Int32, write: Int32)

    /// - Parameters:
    ///   - listenFD: a listening socket (blocking or not); the loop does not close it.
    ///   - summary: where its refusals and evictions are counted (shared by an endpoint's
    ///     loops); `nil`: its own, on `logger`.
    public init(listenFD: Int32, limits: ServerLimits, logger: Logger, summary: LogSummary? = nil) throws(LoopbackError) {
        self.listenFD = listenFD
        self.limits = limits
        self.logger = logger
        self.summary = summary ?? LogSummary(logger: logger)
        wake = try LoopbackSockets.wakePair()
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    /// Connections open now.
    public var connectionCount: Int { table.count }

    /// Asks ``run(while:admit:refuse:serve:)`` to return (from any thread, at once).
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        var byte: UInt8 = 1
        _ = send(wake.write, &byte, 1, Int32(MSG_NOSIGNAL))  // EAGAIN: a wake-up is already pending
    }

    /// Stops reading every open connection (`SHUT_RD`), so each ends after what is in flight.
    public func shutDownReading() { table.shutDownReading() }

    /// Accepts until ``stop()`` (at once) or until `shouldContinue` says no (checked every 250 ms).
    /// - Parameters:
    ///   - admit: decides before the connection counts (e.g. the peer's uid); false closes it.
    ///   - refuse: writes the endpoint's "too many connections" answer (the loop closes the fd).
    ///   - serve: serves one connection on its own thread.
    public func run(
        while shouldContinue: () -> Bool = { true },
        admit: (Int32) -> Bool = { _ in true },
        refuse: (Int32) -> Void,
        serve: @escaping @Sendable (Connection) -> Void
    ) {
        var restingSince: Int64?
        var sweptAt = POSIX.monotonicMilliseconds()
        while !stopping.load(ordering: .relaxed), shouldContinue() {
            if POSIX.monotonicMilliseconds() - sweptAt >= 250 {
                sweptAt = POSIX.monotonicMilliseconds()
                table.sweep(limits: limits, closed: noteClosed)
                summary.flushIfDue()
            }
            var pollers = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            guard poll(&pollers, 2, 250) > 0, pollers[0].revents != 0 else { continue }
            let fd = accept(listenFD, nil, nil)
            guard fd >= 0 else {
                rest(after: errno, since: &restingSince)
                continue
            }
            if restingSince != nil {
                logger.notice("accepting connections again")
                restingSince = nil
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            // Blocking, whatever the listener is: each connection has its own thread.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            guard admit(fd) else {
                close(fd)
                continue
            }
            // The lowest free number: every descriptor below it is open.
            let full = Int(fd) + limits.descriptorReserve >= DescriptorLimit.current
            let peer = limits.perPeerShare == nil ? nil : PeerCredentials(socket: fd)?.pid
            guard let id = table.admit(fd, limits: limits, full: full, peer: peer, closed: noteClosed) else {
                let why =
                    full
                    ? "the process is short of descriptors"
                    : table.count < limits.maxConnections
                        ? "the peer holds its share (\(limits.perPeerShare ?? 0)) of the connections, all busy"
                        : "\(limits.maxConnections) connections are open"
                summary.record("connection refused: \(why)", peer: Self.peerName(fd), level: .warning)
                refuse(fd)
                close(fd)
                continue
            }
            let connection = Connection(
                fd: fd, deadline: POSIX.monotonicMilliseconds() + limits.requestDeadline.wholeMilliseconds, id: id, table: table)
            do {
                try POSIX.startThread { [table] in
                    serve(connection)
                    table.remove(id)
                    close(fd)
                }
            } catch {
                summary.record("cannot start a thread for a connection: \(error)", peer: Self.peerName(fd), level: .error)
                table.remove(id)
                close(fd)
            }
        }
        summary.flush()
    }

    /// Counts a connection the table closed (called under its lock, the descriptor still open).
    private func noteClosed(_ fd: Int32, _ reason: ConnectionTable.Closing) {
        let event =
            switch reason {
            case .evicted: "closed a waiting or idle connection to make room for a new one"
            case .late: "closed a connection that sent no complete message in time"
            case .idle: "closed a connection idle for \(limits.idleLimit ?? .zero)"
            }
        summary.record(event, peer: Self.peerName(fd), level: reason == .evicted ? .notice : .info)
    }

    /// `pid N` for a Unix-socket peer, else `a loopback client`.
    static func peerName(_ fd: Int32) -> String {
        PeerCredentials(socket: fd).map { "pid \($0.pid)" } ?? "a loopback client"
    }

    /// After a failed accept: out of descriptors (the listening socket stays readable, so
    /// trying again at once would spin), rest ``ServerLimits/acceptBackoff``; a connection
    /// that went away before it was accepted, or a signal, needs nothing.
    private func rest(after error: Int32, since restingSince: inout Int64?) {
        switch error {
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
            if restingSince == nil {
                logger.warning("cannot accept a connection (\(POSIX.errorString(error))); retrying every \(limits.acceptBackoff)")
                restingSince = POSIX.monotonicMilliseconds()
            }
            var none = pollfd(fd: -1, events: 0, revents: 0)
            _ = poll(&none, 1, Int32(clamping: limits.acceptBackoff.wholeMilliseconds))
        default:
            return
        }
    }
}
