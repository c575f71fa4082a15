#if canImport(Glibc)
import Glibc
#endif
import JSON
import JSONRPC
import Logging
import Synchronization

/// `auth-sidecar managed-identity`: the App Service managed-identity endpoint on 127.0.0.1,
/// answering with the signed-in user's tokens (``ManagedIdentityProtocol``). Every
/// connection gets a thread and one request; the request head must arrive within 5 seconds
/// and 16 KiB.
public final class ManagedIdentityServer: Sendable {
    /// A token for a scope, or an error reply (e.g. sign-in needed).
    public typealias TokenSource = @Sendable (_ scope: String) async -> Result<(token: String, expiresOn: Int64, tokenType: String), ReplyError>

    let secret: String
    let clientId: String
    let tokens: TokenSource
    let logger: Logger
    private let listenFD: Int32
    /// The port bound on 127.0.0.1.
    public let port: UInt16
    private let stopping = Atomic<Bool>(false)

    /// Binds 127.0.0.1:`port` (0: any free port).
    public init(port requested: UInt16, secret: String, clientId: String, logger: Logger, tokens: @escaping TokenSource) throws(AdapterError) {
        self.secret = secret
        self.clientId = clientId
        self.tokens = tokens
        self.logger = logger
        (listenFD, port) = try LoopbackSocket.listen(port: requested)
    }

    /// Serves until ``stop()``.
    public func run() {
        while !stopping.load(ordering: .relaxed) {
            var poller = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 250) > 0 else { continue }
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            if !startThread({ [self] in serve(client) }) { close(client) }
        }
        close(listenFD)
    }

    public func stop() { stopping.store(true, ordering: .relaxed) }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        guard let head = HTTPHead.read(from: fd) else {
            write(.error(400, "the request is not HTTP/1.1 or too large or too slow"), to: fd)
            return
        }
        switch ManagedIdentityProtocol.evaluate(method: head.method, target: head.target, headers: head.headers, secret: secret) {
        case .failure(let refused):
            logger.info("managed-identity request refused", metadata: ["status": "\(refused.reply.status)"])
            write(refused.reply, to: fd)
        case .success(let request):
            let done = ReplySlot()
            let tokens = self.tokens
            let clientId = self.clientId
            Task {
                switch await tokens(request.scope) {
                case .success(let answer):
                    done.put(ManagedIdentityProtocol.tokenReply(token: answer.token, expiresOn: answer.expiresOn, tokenType: answer.tokenType,
                                                                resource: request.resource, clientId: clientId))
                case .failure(let failure):
                    done.put(failure.reply)
                }
            }
            write(done.take(), to: fd)
        }
    }

    private func write(_ reply: ManagedIdentityProtocol.Reply, to fd: Int32) {
        let body = reply.body.serialized()
        let reason = [200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed"][reply.status] ?? "Error"
        let head = "HTTP/1.1 \(reply.status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
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

/// A reply handed from the task that fetched the token to the connection's thread.
final class ReplySlot: @unchecked Sendable {
    private var reply: ManagedIdentityProtocol.Reply?
    private var semaphore = sem_t()

    init() { sem_init(&semaphore, 0, 0) }
    deinit { sem_destroy(&semaphore) }

    /// Called once.
    func put(_ value: ManagedIdentityProtocol.Reply) {
        reply = value
        sem_post(&semaphore)  // publishes `reply` to the waiter
    }

    func take() -> ManagedIdentityProtocol.Reply {
        while sem_wait(&semaphore) != 0, errno == EINTR {}
        return reply ?? .error(500, "no reply")
    }
}
