import JSON

/// The client as a running request sees it: where the engine sends `deviceCode`
/// notifications and `openUrl` requests. A seam: the server's is ``ConnectionPeerChannel``
/// (replies come back through its read loop); handler tests give a ``RequestContext`` a fake.
public protocol PeerChannel: Sendable {
    /// Sends the peer a notification.
    func notify(_ method: String, params: JSONValue)
    /// Sends the peer a request and waits for its reply; cancelling the calling task stops
    /// waiting.
    func request(_ method: String, params: JSONValue) async throws -> JSONValue
}

/// What a running request can do besides returning its result: send the peer
/// notifications and requests (e.g. `deviceCode`, `openUrl`).
public struct RequestContext: Sendable {
    /// The id of the request being served.
    public let id: RequestID
    let peer: any PeerChannel

    /// A context for the request `id` whose messages to the client go to `peer`.
    public init(id: RequestID, peer: any PeerChannel) {
        self.id = id
        self.peer = peer
    }

    /// Sends the peer a notification.
    public func notify(_ method: String, params: JSONValue) {
        peer.notify(method, params: params)
    }

    /// Sends the peer a request and waits for its reply; cancelling the calling task stops
    /// waiting (the reply, if it comes, is then ignored).
    public func request(_ method: String, params: JSONValue) async throws -> JSONValue {
        try await peer.request(method, params: params)
    }
}

/// The server's side of messages it originates: notifications, and requests whose replies
/// come back through the read loop.
final class ConnectionPeerChannel: PeerChannel, @unchecked Sendable {
    private let lock = ConditionLock()
    private var nextID = 1
    /// Made empty with `init()`: a `[:]` literal builds its (key, value) tuple type at run time,
    /// which a process that never asks its client anything need not pay for.
    private var waiting = [RequestID: CheckedContinuation<JSONValue, any Error>]()
    private var sender: (@Sendable (JSONValue) -> Void)?
    /// Why the peer can no longer answer (its input ended), once it is so; guarded by `lock`.
    private var gone: (any Error)?

    /// Sets where outgoing messages go (once, before any is sent).
    func connect(_ sender: @escaping @Sendable (JSONValue) -> Void) {
        lock.withLock { self.sender = sender }
    }

    private func send(_ message: JSONValue) {
        lock.withLock { sender }?(message)
    }

    func notify(_ method: String, params: JSONValue) {
        send(OutgoingMessage.notification(method, params: params))
    }

    func request(_ method: String, params: JSONValue) async throws -> JSONValue {
        let id: RequestID = lock.withLock {
            defer { nextID += 1 }
            return .string("sidecar-\(nextID)")
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let refusal: (any Error)? = lock.withLock {
                    if Task.isCancelled { return CancellationError() }
                    if let gone { return gone }
                    waiting[id] = continuation
                    return nil
                }
                if let refusal {
                    continuation.resume(throwing: refusal)
                    return
                }
                send(OutgoingMessage.request(method, params: params, id: id))
            }
        } onCancel: {
            resolve(id, with: .failure(CancellationError()))
        }
    }

    /// Whether a request to the peer waits for its reply.
    var isWaiting: Bool { lock.withLock { !waiting.isEmpty } }

    /// Delivers the peer's reply; returns false when nobody waits for that id.
    @discardableResult
    func resolve(_ id: RequestID, with outcome: Result<JSONValue, any Error>) -> Bool {
        guard let continuation = lock.withLock({ waiting.removeValue(forKey: id) }) else { return false }
        continuation.resume(with: outcome)
        return true
    }

    /// Fails every request still waiting with `error` (the server is stopping).
    func failAll(with error: any Error = CancellationError()) {
        let all = lock.withLock {
            defer { waiting.removeAll() }
            return waiting
        }
        for continuation in all.values { continuation.resume(throwing: error) }
    }

    /// The peer's input ended: no reply can come any more, so every request waiting for one,
    /// and every later one, fails with ``RPCError/peerGone`` instead of waiting for ever.
    func inputEnded() {
        lock.withLock { gone = RPCError.peerGone }
        failAll(with: RPCError.peerGone)
    }
}
