import JSON
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A blocking JSON-RPC 2.0 client over one file descriptor (a socket or a pipe pair's end),
/// in NDJSON framing, on the calling thread: ``call(_:params:timeoutSeconds:)`` one request
/// at a time, or ``sendRequest(_:params:)`` several and ``reply(to:timeoutSeconds:)`` each.
///
/// While it waits for a reply it passes the server's notifications to ``onNotification``
/// and answers the server's requests (such as `openUrl`) with ``onRequest``.
///
/// ```swift
/// let client = JSONRPCClient(fd: socket)
/// client.onNotification = { method, params in ... }
/// switch try client.call("ping") { case .success(let result): ...; case .failure(let error): ... }
/// ```
///
/// Concurrency: not thread-safe; one thread owns the client (the verbs' main thread).
public final class JSONRPCClient {
    /// Why no reply could be had (the request's own error is a `.failure` result instead).
    public enum Failure: Error, Equatable {
        /// The server closed the connection (or the descriptor failed, with its errno).
        case closed(errno: Int32?)
        /// No reply within the time limit.
        case timedOut
    }

    /// The connection; -1 after ``close()``, so a closed client never writes to a descriptor
    /// number the system has since given to another file.
    private var fd: Int32
    private var decoder: FrameDecoder
    private var nextID: Int64 = 1
    /// Replies read while waiting for another one.
    private var earlyReplies: [RequestID: Result<JSONValue, RPCError>] = [:]
    /// Called with each server notification (`deviceCode`, ...).
    public var onNotification: (String, JSONValue?) -> Void = { _, _ in }
    /// Answers each server request (`openUrl`, ...); the default refuses with -32601.
    public var onRequest: (String, JSONValue?) -> Result<JSONValue, RPCError> = { method, _ in
        .failure(.methodNotFound(method))
    }

    /// - Parameters:
    ///   - fd: the connection; the client reads and writes it, and closes it in ``close()``.
    ///   - maxMessageSize: the largest message accepted from the server.
    public init(fd: Int32, maxMessageSize: Int = 64 << 20) {
        self.fd = fd
        decoder = FrameDecoder(maxMessageSize: maxMessageSize)
    }

    /// Sends a request and waits for its reply, handling what the server sends meanwhile.
    /// - Parameter timeoutSeconds: the longest wait for the reply; `nil`: no limit.
    /// - Returns: the result, or the server's error object as `.failure`.
    public func call(_ method: String, params: JSONValue = [:], timeoutSeconds: Double? = nil)
        throws(Failure) -> Result<JSONValue, RPCError>
    {
        try reply(to: try sendRequest(method, params: params), timeoutSeconds: timeoutSeconds)
    }

    /// Sends a request without waiting; ``reply(to:timeoutSeconds:)`` reads its reply.
    /// - Returns: the request's id.
    public func sendRequest(_ method: String, params: JSONValue = [:]) throws(Failure) -> RequestID {
        let id = RequestID.number(nextID)
        nextID += 1
        try send(OutgoingMessage.request(method, params: params, id: id))
        return id
    }

    /// Waits for the reply to the request `id`, handling what the server sends meanwhile and
    /// keeping other replies for their own callers.
    /// - Parameter timeoutSeconds: the longest wait; `nil`: no limit.
    public func reply(to id: RequestID, timeoutSeconds: Double? = nil) throws(Failure) -> Result<JSONValue, RPCError> {
        if let early = earlyReplies.removeValue(forKey: id) { return early }
        let deadline = timeoutSeconds.map { POSIX.monotonicSeconds() + $0 }
        while true {
            var found: Result<JSONValue, RPCError>?
            // Every message read is handled, even those after the one waited for.
            for message in try readMessages(until: deadline) {
                if let outcome = try handle(message, waitingFor: id) { found = outcome }
            }
            if let found { return found }
        }
    }

    /// Sends a notification (no reply).
    public func notify(_ method: String, params: JSONValue = [:]) throws(Failure) {
        try send(OutgoingMessage.notification(method, params: params))
    }

    /// Closes the connection: the server sees the end of its input. Later requests fail
    /// with ``Failure/closed(errno:)``.
    public func close() {
        guard fd >= 0 else { return }
        _ = Glibc.close(fd)
        fd = -1
    }

    /// The waited-for outcome if `message` is its reply; other messages are dispatched.
    private func handle(_ message: IncomingMessage, waitingFor id: RequestID) throws(Failure) -> Result<JSONValue, RPCError>? {
        switch message {
        case .response(let replyID, let outcome):
            // A server that could not read the request answers with id null.
            if replyID == id || (replyID == .null && (try? outcome.get()) == nil) { return outcome }
            earlyReplies[replyID] = outcome
        case .notification(let method, let params):
            onNotification(method, params)
        case .request(let requestID, let method, let params):
            let reply: JSONValue =
                switch onRequest(method, params) {
                case .success(let result): OutgoingMessage.result(result, id: requestID)
                case .failure(let error): OutgoingMessage.error(error, id: requestID)
                }
            try send(reply)
        case .invalid:
            break
        }
        return nil
    }

    private func send(_ message: JSONValue) throws(Failure) {
        var bytes = message.serialized()
        bytes.append(UInt8(ascii: "\n"))
        guard fd >= 0 else { throw .closed(errno: EBADF) }
        // A vanished server is an error, not SIGPIPE.
        guard POSIX.writeAll(fd, bytes, to: .socketWithoutSignal) else { throw .closed(errno: errno) }
    }

    /// The next messages from the server (at least one), waiting at most until `deadline`.
    private func readMessages(until deadline: Double?) throws(Failure) -> [IncomingMessage] {
        var messages: [IncomingMessage] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while messages.isEmpty {
            try waitReadable(until: deadline)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count < 0 { throw .closed(errno: errno) }
            if count == 0 { throw .closed(errno: nil) }
            decoder.feed(Array(chunk[..<count])) { event in
                guard case .message(let bytes) = event, let value = try? JSONValue.parse(bytes) else { return }
                messages.append(contentsOf: value.arrayValue?.map(IncomingMessage.init) ?? [IncomingMessage(value)])
            }
        }
        return messages
    }

    private func waitReadable(until deadline: Double?) throws(Failure) {
        guard fd >= 0 else { throw .closed(errno: EBADF) }
        guard let deadline else { return }
        while true {
            let remaining = deadline - POSIX.monotonicSeconds()
            guard remaining > 0 else { throw .timedOut }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw .closed(errno: errno) }
        }
    }

}
