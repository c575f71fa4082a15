import AuthSeams
import Logging
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one-shot HTTP/1.1 server: a dedicated thread multiplexing, with `poll`, the
/// listening socket, a wake-up socket and up to `maxConnections` browser connections.
///
/// Every response closes its connection. When the request carrying the expected state
/// arrives, its page is written, the response is delivered and the loop ends, closing
/// everything; `close()` ends it at any time through the wake-up socket.
///
/// Idle connections cannot starve the browser (slow-loris): connections are served
/// concurrently, and when all `maxConnections` slots are taken a new connection replaces
/// the oldest idle one (a parked or answering one is never evicted).
///
/// `@unchecked Sendable`: `startThread()` hands the loop whole to its own thread, and from
/// then on only that thread touches it (the async side talks through ``RedirectExchange``).
final class ServerLoop: @unchecked Sendable {
    static let maxConnections = 32
    /// A connection must deliver its whole request within this time (slow clients).
    static let readTimeoutMilliseconds: Int64 = 10_000
    /// A request parked until the caller names the expected state waits at most this long.
    static let parkTimeoutMilliseconds: Int64 = 60_000

    private enum Phase {
        case reading
        /// A valid-looking redirect waiting for the expected state to be known.
        case parked([String: String])
        case writing(bytes: [UInt8], offset: Int, deliver: AuthorizationResponse?)
    }

    private struct Connection {
        var fd: Int32
        var input: [UInt8] = []
        var phase: Phase = .reading
        var deadline: Int64
    }

    private let listenFD: Int32
    private let wakeReadFD: Int32
    private let exchange: RedirectExchange
    private let evaluator: RedirectRequestEvaluator
    private let logger: Logger
    private var connections: [Connection] = []
    /// The matching request arrived: accept nothing more.
    private var accepted = false
    /// Its page was written (or the browser left) and the response delivered.
    private var finished = false

    init(
        listenFD: Int32, wakeReadFD: Int32, exchange: RedirectExchange,
        evaluator: RedirectRequestEvaluator, logger: Logger
    ) {
        self.listenFD = listenFD
        self.wakeReadFD = wakeReadFD
        self.exchange = exchange
        self.evaluator = evaluator
        self.logger = logger
    }

    /// Starts the loop on a new detached thread; on failure the caller still owns the descriptors.
    func startThread() throws(LoopbackError) {
        do {
            try POSIX.startThread { [self] in run() }
        } catch {
            throw .serverFailed(error.description)
        }
    }

    /// The loop; returns when the response was delivered, on stop, or on a poll failure.
    private func run() {
        var failure: LoopbackError?
        while !finished && !exchange.stopRequested {
            if let expected = exchange.expectedState { decideParked(expectedState: expected) }
            if finished { break }
            var fds = [pollfd(fd: wakeReadFD, events: Int16(POLLIN), revents: 0)]
            let accepting = !accepted && (connections.count < Self.maxConnections || evictableIndex() != nil)
            fds.append(pollfd(fd: accepting ? listenFD : -1, events: Int16(POLLIN), revents: 0))
            for connection in connections {
                let events: Int32
                switch connection.phase {
                case .reading: events = Int32(POLLIN)
                case .parked: events = 0  // POLLHUP/POLLERR are still reported
                case .writing: events = Int32(POLLOUT)
                }
                fds.append(pollfd(fd: connection.fd, events: Int16(events), revents: 0))
            }
            let ready = poll(&fds, nfds_t(fds.count), pollTimeout())
            if ready < 0 {
                if errno == EINTR { continue }
                failure = .serverFailed("poll: \(POSIX.errorString(errno))")
                break
            }
            if fds[0].revents != 0 { drainWakeups() }
            // Connections first (indices match `fds` offset by 2), then new ones.
            for index in connections.indices.reversed() {
                let revents = Int32(fds[index + 2].revents)
                if revents != 0 { service(index, revents: revents) }
            }
            expireDeadlines()
            if fds[1].revents != 0 && !accepted { acceptConnections() }
        }
        for connection in connections { close(connection.fd) }
        connections = []
        close(listenFD)
        exchange.threadDidStop(wakeReadFD: wakeReadFD, failure: failure)
    }

    private func pollTimeout() -> Int32 {
        guard let next = connections.map(\.deadline).min() else { return -1 }
        return Int32(clamping: max(0, next - POSIX.monotonicMilliseconds()))
    }

    private func drainWakeups() {
        var sink: [UInt8] = []
        while let count = LoopbackSockets.readAvailable(wakeReadFD, into: &sink, max: 64), count > 0 { sink.removeAll() }
    }

    /// Accepts what is pending; at the cap, each new connection replaces the oldest one
    /// still reading (accepted first, so the one that waited longest without a request).
    private func acceptConnections() {
        while true {
            let victim = connections.count < Self.maxConnections ? nil : evictableIndex()
            guard connections.count < Self.maxConnections || victim != nil,
                let fd = LoopbackSockets.acceptConnection(listenFD)
            else { return }
            if let victim {
                logger.debug("loopback: connection limit reached; closing the oldest idle connection")
                close(connections[victim].fd)
                connections.remove(at: victim)
            }
            connections.append(Connection(fd: fd, deadline: POSIX.monotonicMilliseconds() + Self.readTimeoutMilliseconds))
        }
    }

    /// The oldest connection that has sent nothing yet, else the oldest still reading its
    /// request (connections are kept in accept order).
    private func evictableIndex() -> Int? {
        func reading(_ connection: Connection) -> Bool {
            guard connection.fd >= 0, case .reading = connection.phase else { return false }
            return true
        }
        return connections.firstIndex { reading($0) && $0.input.isEmpty } ?? connections.firstIndex(where: reading)
    }

    private func service(_ index: Int, revents: Int32) {
        switch connections[index].phase {
        case .reading:
            guard let count = LoopbackSockets.readAvailable(connections[index].fd, into: &connections[index].input) else { return }
            guard count > 0 else { return drop(index) }
            handleInput(index)
        case .parked:
            if revents & Int32(POLLHUP | POLLERR) != 0 { drop(index) }
        case .writing(let bytes, let offset, let deliver):
            guard let newOffset = LoopbackSockets.sendAvailable(connections[index].fd, bytes, from: offset) else {
                return finishWriting(index, deliver: deliver)
            }
            if newOffset == bytes.count { return finishWriting(index, deliver: deliver) }
            connections[index].phase = .writing(bytes: bytes, offset: newOffset, deliver: deliver)
        }
    }

    private func handleInput(_ index: Int) {
        switch HTTPRequestParser.parse(connections[index].input) {
        case .incomplete:
            return
        case .invalid(let status):
            logger.debug("loopback: malformed request answered \(status.code)")
            reply(index, RedirectPages.error(status, message: "Malformed request."))
        case .complete(let request):
            switch evaluator.prevalidate(request) {
            case .reject(let page, let reason):
                logger.debug("loopback: \(request.method) \(request.path) answered \(page.status.code) (\(reason))")
                reply(index, page)
            case .parameters(let parameters):
                connections[index].phase = .parked(parameters)
                connections[index].deadline = POSIX.monotonicMilliseconds() + Self.parkTimeoutMilliseconds
                if let expected = exchange.expectedState { decideParked(expectedState: expected) }
            }
        }
    }

    /// Decides every parked request now that the expected state is known.
    private func decideParked(expectedState: String) {
        for index in connections.indices {
            guard case .parked(let parameters) = connections[index].phase, !accepted else { continue }
            switch evaluator.decide(parameters, expectedState: expectedState) {
            case .reject(let page, let reason):
                logger.warning("loopback: ignored a redirect request (\(reason)); still waiting")
                reply(index, page)
            case .accept(let response, let page):
                logger.info("loopback: authorization response received (\(response.error.map { "error \($0)" } ?? "code"))")
                accepted = true  // deliver once the page is written
                connections[index].phase = .writing(bytes: page.serialized(), offset: 0, deliver: response)
                connections[index].deadline = POSIX.monotonicMilliseconds() + Self.readTimeoutMilliseconds
                service(index, revents: Int32(POLLOUT))
            }
        }
    }

    private func reply(_ index: Int, _ page: HTTPReply) {
        connections[index].phase = .writing(bytes: page.serialized(), offset: 0, deliver: nil)
        connections[index].deadline = POSIX.monotonicMilliseconds() + Self.readTimeoutMilliseconds
        service(index, revents: Int32(POLLOUT))
    }

    /// The page is out (or the browser went away): half-close, drain, close, and deliver.
    private func finishWriting(_ index: Int, deliver: AuthorizationResponse?) {
        let fd = connections[index].fd
        shutdown(fd, Int32(SHUT_WR))
        var sink: [UInt8] = []
        while let count = LoopbackSockets.readAvailable(fd, into: &sink), count > 0, sink.count < 1 << 20 {}
        drop(index)
        deliverIfNeeded(deliver)
    }

    private func deliverIfNeeded(_ response: AuthorizationResponse?) {
        guard let response else { return }
        finished = true
        exchange.finish(.success(response))
    }

    /// Closes a connection; the slot is marked and removed by the sweep at the end of the
    /// iteration (so indices stay valid while `poll` results are walked).
    private func drop(_ index: Int) {
        guard connections[index].fd >= 0 else { return }
        close(connections[index].fd)
        connections[index].fd = -1
        connections[index].phase = .reading
        connections[index].deadline = .max
        sweepLater = true
    }

    private var sweepLater = false

    private func expireDeadlines() {
        let now = POSIX.monotonicMilliseconds()
        for index in connections.indices where connections[index].fd >= 0 && connections[index].deadline <= now {
            switch connections[index].phase {
            case .reading:
                reply(index, RedirectPages.error(.requestTimeout, message: "Request timed out."))
            case .parked:
                reply(index, RedirectPages.error(.serviceUnavailable, message: "The application is not waiting for a sign-in."))
            case .writing(_, _, let deliver):
                drop(index)
                deliverIfNeeded(deliver)
            }
        }
        if sweepLater {
            connections.removeAll { $0.fd < 0 }
            sweepLater = false
        }
    }
}
