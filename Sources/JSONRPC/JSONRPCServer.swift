import JSON
import Logging
import POSIXSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A JSON-RPC 2.0 server over a pair of file descriptors.
///
/// The read loop runs on the calling thread: it frames and parses input, answers protocol
/// faults and cheap methods inline, and starts a task per concurrent request; replies go out
/// as requests finish, through an ``OutputChannel``.
///
/// ```swift
/// let server = JSONRPCServer(service: MyService(), options: .init(), logger: logger)
/// let status = server.run(input: 0, output: protocolFD)   // returns at end of input or `exit`
/// ```
public final class JSONRPCServer: @unchecked Sendable {
    public struct Options: Sendable {
        /// Messages larger than this are refused with -32600 and skipped.
        public var maxMessageSize: Int = 4 << 20
        /// Seconds to wait for cancelled requests to answer when stopping on a signal.
        public var cancelGraceSeconds: Double = 2
        /// Requests running at once before the reader waits (backpressure).
        public var maxInFlight = 1024
        /// Message shapes refused before parsing with -32600 (batch, object and value counts).
        public var shapeLimits = JSONShapeLimits.message
        /// Whether the reader may wait a moment for a quick answer (``ReaderMoment/idle``) when
        /// this session has nothing in flight. A server of many sessions over one engine (the
        /// agent) says no: its readers would queue on the engine's cache lock one behind the
        /// other, where a task waits on the few threads that run tasks (issue 41: 200 clients
        /// got about 50,000 replies/s instead of 35,000).
        public var readerMayWait = true
        /// Whether the reader gives up the processor after each chunk of input it answered. A
        /// server of many sessions (the agent) says yes: a lock-step client and the reader
        /// answering it otherwise wake each other on one core in bursts while other sessions'
        /// readers wait their turn (issue 41, 200 clients: p99 62-71 ms without, 12-15 ms with,
        /// about 5% fewer replies/s). With nothing else to run it returns at once. Such a
        /// reader also tries a quick answer once more after a yield before it starts a task
        /// (issue 41, 200 clients: about 40,000 → 60,000 replies/s, p99 about 20 → 10 ms).
        public var readerYields = false
        public init(maxMessageSize: Int = 4 << 20, maxInFlight: Int = 1024, shapeLimits: JSONShapeLimits = .message) {
            self.maxMessageSize = maxMessageSize
            self.maxInFlight = maxInFlight
            self.shapeLimits = shapeLimits
        }
    }

    private let service: any RPCService
    private let options: Options
    private let logger: Logger
    private let inFlight: InFlightRequests
    private let state = ConditionLock()
    private var output: OutputChannel?
    private var shutdownRequested = false
    private var stopped = false
    private let peer = ConnectionPeerChannel()
    /// When the last read of input returned (`POSIX.monotonicNanoseconds()`); the reader's own.
    private var receivedAt: UInt64 = 0
    /// Requests recently parsed, by their text apart from the id; the reader's own.
    private var lineMemo = RequestLineMemo()
    /// The thread running ``run(input:output:)``, set before any task starts: what it sends
    /// goes out at the end of the input chunk (``OutputChannel/flush()``).
    private var readerThread: pthread_t?
    /// When a message last came in or a request last finished (``POSIX/monotonicMilliseconds()``);
    /// 0 before the first complete message. For ``activity``.
    private let lastActivity = Atomic<Int64>(0)
    /// Whether `initialize` came: the client keeps this session (an editor, a client library).
    private let initializeSeen = Atomic<Bool>(false)

    public init(service: any RPCService, options: Options = Options(), logger: Logger) {
        self.service = service
        self.options = options
        self.logger = logger
        inFlight = InFlightRequests(limit: options.maxInFlight)
        peer.connect { [weak self] in self?.send($0) }
    }

    /// Serves until end of input or `exit`; in-flight requests are finished first.
    /// Returns the process exit status: 0, or 1 for `exit` without `shutdown`.
    ///
    /// - Parameter beforeFirstWait: run once on this thread, before the reader first waits
    ///   (a read of input that would block, or the requests in flight at end of input), and at
    ///   the latest once the first chunk of input has been answered: what a fresh process that
    ///   finds its request waiting need not do before answering it (the termination-signal
    ///   thread, ``TerminationSignals``).
    public func run(input: Int32, output outputFD: Int32, beforeFirstWait: (() -> Void)? = nil) -> Int32 {
        var decoder = FrameDecoder(maxMessageSize: options.maxMessageSize)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { chunk.deallocate() }
        var exitStatus: Int32?
        readerThread = pthread_self()
        var beforeFirstWait = beforeFirstWait
        while exitStatus == nil {
            if let action = beforeFirstWait, !POSIX.isReadableNow(input) {
                beforeFirstWait = nil
                action()
            }
            let count = read(input, chunk.baseAddress, chunk.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                if count < 0 { logger.warning("reading input failed; stopping", metadata: ["errno": "\(errno)"]) }
                decoder.finish { handle($0, exitStatus: &exitStatus) }
                break
            }
            receivedAt = POSIX.monotonicNanoseconds()
            let bytes = UnsafeRawBufferPointer(rebasing: chunk[..<count])
            if decoder.framing == nil, let first = bytes.first(where: { !$0.isJSONWhitespace }) {
                openOutput(fd: outputFD, framing: Framing(firstByte: first))
            }
            decoder.feed(bytes) { event in
                if exitStatus == nil { handle(event, exitStatus: &exitStatus) }
            }
            state.withLock { output }?.flush()  // the replies answered on this thread, at once
            if options.readerYields { sched_yield() }
            if let action = beforeFirstWait {
                beforeFirstWait = nil
                action()
            }
        }
        beforeFirstWait?()  // input that ended within its first chunk
        logger.debug("input ended; waiting for requests in flight", metadata: ["count": "\(inFlight.count)"])
        peer.inputEnded()
        inFlight.waitUntilEmpty()
        stop()
        return exitStatus ?? 0
    }

    /// What the session is doing, for a server of many sessions that closes idle ones: no
    /// complete message yet, something in flight (a request, or a question to the client),
    /// or idle since a moment.
    public struct Activity: Sendable, Equatable {
        /// A complete message (or a framing error) came in.
        public var receivedMessage: Bool
        /// A request runs, or the server waits for the client's reply to its own request.
        public var busy: Bool
        /// The client sent `initialize`.
        public var initialized: Bool
        /// When the last message came in or the last request finished (monotonic ms).
        public var idleSince: Int64
    }

    /// What the session is doing now (from any thread).
    public var activity: Activity {
        let last = lastActivity.load(ordering: .relaxed)
        return Activity(
            receivedMessage: last != 0, busy: inFlight.count > 0 || peer.isWaiting,
            initialized: initializeSeen.load(ordering: .relaxed), idleSince: last)
    }

    private func noteActivity() {
        lastActivity.store(max(1, POSIX.monotonicMilliseconds()), ordering: .relaxed)
    }

    /// Cancels everything in flight (each answers -32800), waits briefly for the replies,
    /// and flushes output. For SIGTERM/SIGINT.
    public func cancelAllAndStop() {
        inFlight.cancelAll()
        peer.failAll()
        inFlight.waitUntilEmpty(timeoutSeconds: options.cancelGraceSeconds)
        stop()
    }

    private func stop() {
        let first: Bool = state.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        service.serverWillStop()
        state.withLock { output }?.close()
    }

    // MARK: Messages

    private func openOutput(fd: Int32, framing: Framing) {
        state.withLock { output = OutputChannel(fd: fd, framing: framing) }
        logger.debug("framing detected", metadata: ["framing": "\(framing.rawValue)"])
    }

    /// Sends `message`; from the reader thread, at the end of the input chunk.
    private func send(_ message: JSONValue) {
        let fromReader = readerThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
        state.withLock { output }?.send(message, deferringWake: fromReader)
    }

    /// A reply made on the reader thread: sent at the end of the input chunk.
    private func sendFromReader(serialized pieces: [[UInt8]]) {
        state.withLock { output }?.send(serialized: pieces, deferringWake: true)
    }

    private func handle(_ event: FrameEvent, exitStatus: inout Int32?) {
        noteActivity()
        switch event {
        case .error(let error):
            send(OutgoingMessage.error(error, id: .null))
        case .message(let bytes):
            if let message = lineMemo.request(in: bytes) {
                dispatchAlone(message, exitStatus: &exitStatus)
                return
            }
            if let violation = options.shapeLimits.violation(in: bytes[...]) {
                send(OutgoingMessage.error(.shapeLimit(violation), id: .null))
                return
            }
            let value: JSONValue
            do {
                value = try JSONValue.parse(bytes)
            } catch {
                send(OutgoingMessage.error(.parseError(error.message), id: .null))
                return
            }
            if case .array(let members) = value {
                handleBatch(members, exitStatus: &exitStatus)
            } else {
                let message = IncomingMessage(value)
                lineMemo.remember(message, line: bytes)
                dispatchAlone(message, exitStatus: &exitStatus)
            }
        }
    }

    /// Runs a message that came alone (not in a batch).
    private func dispatchAlone(_ message: IncomingMessage, exitStatus: inout Int32?) {
        dispatch(message, exitStatus: &exitStatus, alone: true) { [weak self] reply in
            if let reply { self?.send(reply) }
        }
    }

    private func handleBatch(_ members: [JSONValue], exitStatus: inout Int32?) {
        guard !members.isEmpty else {
            send(OutgoingMessage.error(.invalidRequest("an empty batch"), id: .null))
            return
        }
        let collector = BatchCollector(expected: members.count) { [weak self] replies in
            if !replies.isEmpty { self?.send(.array(replies)) }
        }
        for member in members {
            dispatch(IncomingMessage(member), exitStatus: &exitStatus) { collector.add($0) }
        }
    }

    /// Runs one message; `reply` is called exactly once, with `nil` when no reply is due
    /// (or, for a message `alone` (not in a batch), the reply is sent already serialized).
    private func dispatch(
        _ message: IncomingMessage, exitStatus: inout Int32?, alone: Bool = false,
        reply: @escaping @Sendable (JSONValue?) -> Void
    ) {
        switch message {
        case .invalid(let id, let error):
            reply(OutgoingMessage.error(error, id: id))
        case .response(let id, let outcome):
            if !peer.resolve(id, with: outcome.mapError { $0 }) {
                logger.debug("ignored a reply to no pending request", metadata: ["id": "\(id)"])
            }
            reply(nil)
        case .notification(let method, let params):
            handleNotification(method, params: params, exitStatus: &exitStatus)
            reply(nil)
        case .request(let id, let method, let params):
            logger.debug("request", metadata: ["id": "\(id)", "method": "\(method)"])
            if method == "initialize" { initializeSeen.store(true, ordering: .relaxed) }
            let alreadyShuttingDown = state.withLock {
                defer { if method == "shutdown" { shutdownRequested = true } }
                return shutdownRequested
            }
            if alreadyShuttingDown {
                reply(OutgoingMessage.error(.invalidRequest("the server is shutting down", name: "shuttingDown"), id: id))
            } else if inFlight.contains(id) {
                reply(OutgoingMessage.error(Self.duplicateID(id), id: id))
            } else if method == "shutdown" {
                reply(OutgoingMessage.result(.null, id: id))
            } else {
                run(route: service.route(forRequest: method), id: id, params: params, alone: alone, reply: reply)
            }
        }
    }

    private func handleNotification(_ method: String, params: JSONValue?, exitStatus: inout Int32?) {
        switch method {
        case "exit":
            exitStatus = state.withLock { shutdownRequested } ? 0 : 1
        case "$/cancelRequest":
            if let id = params?["id"].flatMap(RequestID.init) { inFlight.cancel(id) }
        default:
            service.receiveNotification(method, params: params)
        }
    }

    private func run(
        route: RPCRoute, id: RequestID, params: JSONValue?, alone: Bool = false,
        reply: @escaping @Sendable (JSONValue?) -> Void
    ) {
        switch route {
        case .failure(let error):
            reply(OutgoingMessage.error(error, id: id))
        case .immediate(let handler):
            do {
                reply(OutgoingMessage.result(try handler(params), id: id))
            } catch {
                reply(OutgoingMessage.error(.from(error, cancelled: false), id: id))
            }
        case .quickOrConcurrent(let quick, let concurrent):
            let moment = ReaderMoment(receivedAt: receivedAt, idle: options.readerMayWait && inFlight.count == 0)
            // A reader that yields tries once more after its turn: what kept the quick answer
            // (another reader holding the cache for a moment) is then usually gone.
            if alone, let result = quick(params, moment) ?? (options.readerYields && sched_yield() == 0 ? quick(params, moment) : nil) {
                sendFromReader(serialized: OutgoingMessage.result(result.serialized, id: id))
            } else {
                run(route: .concurrent(concurrent), id: id, params: params, reply: reply)
            }
        case .concurrent(let handler):
            guard let serial = inFlight.reserve(id) else {
                reply(OutgoingMessage.error(Self.duplicateID(id), id: id))
                return
            }
            let context = RequestContext(id: id, peer: peer)
            let inFlight = self.inFlight
            let task = Task { [weak self] in
                let message: JSONValue
                do {
                    message = OutgoingMessage.result(try await handler(params, context), id: id)
                } catch {
                    message = OutgoingMessage.error(.from(error, cancelled: Task.isCancelled), id: id)
                }
                inFlight.releaseID(serial)
                reply(message)
                self?.noteActivity()
                inFlight.finish(serial)
            }
            inFlight.attach(task, to: serial)
        }
    }

    private static func duplicateID(_ id: RequestID) -> RPCError {
        .invalidRequest("a request with id \(id) is still in flight", name: "duplicateRequestId")
    }
}
