import JSON
import JSONRPC
import Logging
import Loopback
import POSIXSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `auth-sidecar managed-identity`: the App Service managed-identity endpoint on 127.0.0.1,
/// answering with the signed-in user's tokens (``ManagedIdentityProtocol``). Every
/// connection gets a thread and one request; the request head must arrive within 5 seconds
/// and 16 KiB; at most ``maxConnections`` are served at once (more are answered 503).
public final class ManagedIdentityServer: Sendable {
    /// A token for a scope, or an error reply (e.g. sign-in needed).
    ///
    /// Called on the connection's own thread (never on the Swift concurrency pool), possibly
    /// from several connections at once: it may block, and must be safe to call concurrently.
    public typealias TokenSource = @Sendable (_ scope: String) -> Result<Token, ReplyError>

    /// What the token source answers with.
    public struct Token: Sendable, Equatable {
        public let token: String
        public let expiresOn: Int64
        public let tokenType: String

        public init(token: String, expiresOn: Int64, tokenType: String) {
            self.token = token
            self.expiresOn = expiresOn
            self.tokenType = tokenType
        }
    }

    /// The most connections served at once.
    public static let maxConnections = 32

    let secret: String
    let clientId: String
    let tokens: TokenSource
    let logger: Logger
    private let listenFD: Int32
    /// The port bound on 127.0.0.1.
    public let port: UInt16
    /// Set by ``stop()`` from any thread; `run` polls it every 250 ms.
    private let stopping = Atomic<Bool>(false)
    /// Connections being served; incremented by `run`, decremented by each connection's thread.
    private let active = Atomic<Int>(0)

    /// Binds 127.0.0.1:`port` (0: any free port).
    public init(port requested: UInt16, secret: String, clientId: String, logger: Logger, tokens: @escaping TokenSource) throws(AdapterError) {
        self.secret = secret
        self.clientId = clientId
        self.tokens = tokens
        self.logger = logger
        do {
            // Loopback's listener (127.0.0.1 only, close-on-exec, non-blocking: `run` polls
            // before accepting; an accepted connection blocks, with HTTPHead's time limit).
            (listenFD, port) = try LoopbackSockets.listenOnLoopback(port: requested, backlog: 64)
        } catch {
            throw AdapterError(error.description)
        }
    }

    /// The `IDENTITY_ENDPOINT` clients are given.
    public var endpoint: String { "http://127.0.0.1:\(port)\(ManagedIdentityProtocol.path)" }

    /// Serves until ``stop()``.
    public func run() {
        while !stopping.load(ordering: .relaxed) {
            var poller = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 250) > 0 else { continue }
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            guard active.add(1, ordering: .relaxed).newValue <= Self.maxConnections else {
                write(.error(503, "too many requests at once"), to: client)
                finish(client)
                continue
            }
            do {
                try POSIX.startThread { [self] in
                    serve(client)
                    finish(client)
                }
            } catch { finish(client) }
        }
        close(listenFD)
    }

    public func stop() { stopping.store(true, ordering: .relaxed) }

    private func finish(_ fd: Int32) {
        close(fd)
        active.subtract(1, ordering: .relaxed)
    }

    private func serve(_ fd: Int32) {
        guard let head = HTTPHead.read(from: fd) else {
            write(.error(400, "the request is not HTTP/1.1 or too large or too slow"), to: fd)
            return
        }
        switch ManagedIdentityProtocol.evaluate(method: head.method, target: head.target, headers: head.headers, secret: secret) {
        case .failure(let refused):
            logger.info("managed-identity request refused", metadata: ["status": "\(refused.reply.status)"])
            write(refused.reply, to: fd)
        case .success(let request):
            switch tokens(request.scope) {
            case .success(let answer):
                write(
                    ManagedIdentityProtocol.tokenReply(
                        token: answer.token, expiresOn: answer.expiresOn, tokenType: answer.tokenType,
                        resource: request.resource, clientId: clientId), to: fd)
            case .failure(let failure):
                logger.info("managed-identity token not served", metadata: ["status": "\(failure.reply.status)"])
                write(failure.reply, to: fd)
            }
        }
    }

    private func write(_ reply: ManagedIdentityProtocol.Reply, to fd: Int32) {
        let body = reply.body.serialized()
        let head =
            "HTTP/1.1 \(reply.status) \(ManagedIdentityProtocol.reason(reply.status))\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + body
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
