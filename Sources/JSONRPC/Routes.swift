import JSON

/// How the server runs one method, as the service decides for each request.
public enum RPCRoute: Sendable {
    /// Cheap and non-blocking: run on the reader thread, no task created (e.g. `ping`).
    case immediate(@Sendable (JSONValue?) throws -> JSONValue)
    /// Runs in its own task, concurrently with others; cancellable with `$/cancelRequest`.
    case concurrent(@Sendable (JSONValue?, RequestContext) async throws -> JSONValue)
    /// Answer at once with this error (unknown method, not initialized, ...).
    case failure(RPCError)
    /// `quick` first, on the reader thread: the result, when it can be had without waiting (a
    /// token from memory), or with a brief wait when ``ReaderMoment/idle``; when it returns
    /// `nil`, as `.concurrent`. Inside a batch, always as `.concurrent`.
    case quickOrConcurrent(
        quick: @Sendable (_ params: JSONValue?, _ moment: ReaderMoment) -> QuickResult?,
        concurrent: @Sendable (JSONValue?, RequestContext) async throws -> JSONValue)
}

/// What the reader thread knows when it offers a request to a `quick` handler.
public struct ReaderMoment: Sendable {
    /// When the read that brought the request's last byte returned
    /// (`POSIX.monotonicNanoseconds()`).
    public let receivedAt: UInt64
    /// No request is running: a short blocking read (a small local file) on the reader thread
    /// keeps no other answer waiting, and saves starting a task (at a process's first request,
    /// the threads that run tasks).
    public let idle: Bool

    public init(receivedAt: UInt64, idle: Bool) {
        self.receivedAt = receivedAt
        self.idle = idle
    }
}

/// A method's result as JSON text, ready to be sent inside a reply (trusted: made by this
/// process's own serializer, never from input), in pieces that are sent one after the other
/// (so a kept text and a per-request part are not copied together first).
public struct SerializedResult: Sendable {
    public let pieces: [[UInt8]]
    /// Set when the text is a kept head and tail around one string of the request's own (its
    /// correlation id, JSON string content that needs no escaping): two results with the same
    /// head and tail differ in that string only.
    public let template: Template?

    /// A kept text's parts.
    public struct Template: Sendable {
        public let head: [UInt8]
        public let part: String
        public let tail: [UInt8]
    }

    public init(pieces: [[UInt8]]) {
        self.pieces = pieces
        template = nil
    }

    /// `head`, `part`, `tail`, one after the other.
    public init(head: [UInt8], part: String, tail: [UInt8]) {
        pieces = [head, Array(part.utf8), tail]
        template = Template(head: head, part: part, tail: tail)
    }
}

/// A result a `quick` handler found, in the two forms its callers want, each made only when
/// asked: the text a stream's reply carries (the server), or the value a caller in this process
/// or a reply stage reads (never the text parsed back).
public struct QuickResult: Sendable {
    private let text: @Sendable () -> SerializedResult
    private let make: @Sendable () -> JSONValue

    /// - Parameters:
    ///   - serialized: the result's text (made by this process's serializer, or kept from it).
    ///   - value: the same result as a value.
    public init(serialized: @escaping @Sendable () -> SerializedResult, value: @escaping @Sendable () -> JSONValue) {
        text = serialized
        make = value
    }

    /// A result known as a value, serialized when its text is asked for.
    public init(_ value: JSONValue) {
        self.init(serialized: { SerializedResult(pieces: [value.serialized()]) }, value: { value })
    }

    /// The result's text, for a reply.
    public var serialized: SerializedResult { text() }
    /// The result as a value.
    public var value: JSONValue { make() }
}

/// The methods a server offers. The engine itself handles `shutdown`, `exit` and
/// `$/cancelRequest`; everything else is asked of the service.
public protocol RPCService: Sendable {
    /// The route for a request to `method`.
    func route(forRequest method: String) -> RPCRoute
    /// A notification from the peer (other than `exit` and `$/cancelRequest`); unknown ones
    /// are to be ignored.
    func receiveNotification(_ method: String, params: JSONValue?)
    /// Called once when the server stops (end of input, `exit` or a signal), after in-flight
    /// requests ended: the place to flush state.
    func serverWillStop()
}

extension RPCError {
    /// The error to answer for anything a handler threw.
    static func from(_ error: any Error, cancelled: Bool) -> RPCError {
        if cancelled || error is CancellationError { return .requestCancelled }
        if let rpc = error as? RPCError { return rpc }
        return .internalError("the method failed unexpectedly (\(type(of: error)))")
    }
}
