import AuthSeams
import Logging
import POSIXSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a loopback HTTP endpoint does with a request that passed the server's limits and
/// policy: one small type per endpoint (the managed-identity endpoint, the azd endpoint).
public protocol LoopbackHTTPHandler: Sendable {
    /// The answer to `request`. Called on the connection's own thread, possibly on several
    /// at once: it may block (fetch a token), and must be safe to call concurrently.
    func reply(to request: HTTPServerRequest) -> HTTPReply
    /// How this endpoint words a refusal the server decided (malformed, too slow, too many,
    /// wrong Host, from a web page).
    func reply(refusing refusal: HTTPRefusal) -> HTTPReply
}

/// An HTTP/1.1 endpoint on 127.0.0.1: ``AcceptLoop`` (cap, eviction, EMFILE back-off, a
/// thread per connection), ``RequestReader`` (the whole request before a deadline from
/// accept, parsed by ``HTTPRequestParser``), ``RequestPolicy`` (Host, web pages), then the
/// handler. One request per connection; every reply closes it.
public final class LoopbackHTTPServer: Sendable {
    /// The defaults of a program-facing endpoint: 32 connections, the oldest waiting one
    /// evicted, 5 s from accept to the whole request.
    public static let defaultLimits = ServerLimits(
        maxConnections: 32, atCapacity: .evictOldestWaiting, requestDeadline: .seconds(5))

    /// The port bound on 127.0.0.1.
    public let port: UInt16
    private let listenFD: Int32
    private let loop: AcceptLoop
    private let policy: RequestPolicy
    private let handler: any LoopbackHTTPHandler
    private let logger: Logger

    /// Binds 127.0.0.1:`port` (0: any free port).
    public init(
        port requested: UInt16, policy: RequestPolicy, limits: ServerLimits = defaultLimits,
        handler: any LoopbackHTTPHandler, logger: Logger
    ) throws(LoopbackError) {
        (listenFD, port) = try LoopbackSockets.listenOnLoopback(port: requested, backlog: 128)
        do {
            loop = try AcceptLoop(listenFD: listenFD, limits: limits, logger: logger)
        } catch {
            close(listenFD)
            throw error
        }
        self.policy = policy
        self.handler = handler
        self.logger = logger
    }

    /// Connections open now.
    public var connectionCount: Int { loop.connectionCount }

    /// Serves until ``stop()``, then closes the listening socket (connections being answered
    /// finish on their own threads).
    public func run() {
        loop.run(
            refuse: { [self] fd in send(handler.reply(refusing: HTTPRefusal(.serviceUnavailable, "too many connections")), to: fd) },
            serve: { [self] connection in serve(connection) })
        close(listenFD)
    }

    /// Asks ``run()`` to return (from any thread).
    public func stop() { loop.stop() }

    private func serve(_ connection: AcceptLoop.Connection) {
        let reply: HTTPReply
        switch RequestReader.read(from: connection.fd, deadline: connection.deadline, maxBody: loop.limits.maxRequestBody) {
        case .closed:
            return
        case .timedOut:
            reply = handler.reply(refusing: HTTPRefusal(.requestTimeout, "the request did not arrive whole in time"))
        case .invalid(let status):
            reply = handler.reply(refusing: HTTPRefusal(status, "the request is not HTTP/1.1 or too large"))
        case .request(let request):
            connection.markAnswering()
            if let refusal = policy.refusal(of: request, port: port) {
                logger.info("loopback request refused", metadata: ["status": "\(refusal.status.code)", "reason": "\(refusal.message)"])
                reply = handler.reply(refusing: refusal)
            } else {
                reply = handler.reply(to: request)
            }
        }
        send(reply, to: connection.fd)
    }

    /// Writes the reply, then half-closes and reads what the client still sends (briefly), so
    /// closing with unread bytes does not reset the connection before the client reads it.
    /// The reply's ``HTTPReply/afterSending`` runs once it is out (or the client is gone).
    private func send(_ reply: HTTPReply, to fd: Int32) {
        let written = POSIX.writeAll(fd, reply.serialized(), to: .socketWithoutSignal)
        reply.afterSending?()
        guard written else { return }
        shutdown(fd, Int32(SHUT_WR))
        var sink = [UInt8](repeating: 0, count: 4096)
        var drained = 0
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while drained < 1 << 16, poll(&poller, 1, 100) > 0 {
            let count = sink.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            drained += count
        }
    }
}
