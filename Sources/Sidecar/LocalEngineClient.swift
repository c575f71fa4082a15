import Dispatch
import JSON
import JSONRPC
import POSIXSupport

/// The engine in this process, called directly, as sourcekit-lsp's `LocalConnection` does: each
/// request goes through ``SidecarService``'s route (so through the same request pipeline as
/// every door), with no socket pair, no server thread and no JSON on the way in. An immediate
/// route and the fast path (a silent token from memory, or from a quick read of the cache) answer
/// on the verb's own thread; anything else runs as a task whose reply the verb waits for, while
/// the engine's messages to the verb (`deviceCode`, `openUrl`) are handled on the task's thread.
///
/// Concurrency: the verb's thread owns it (as it owns a ``JSONRPCClient``); a task writes its
/// outcome under a lock and signals, the verb's thread waits.
public final class LocalEngineClient: EngineClient {
    public var onNotification: (String, JSONValue?) -> Void = { _, _ in }
    public var onRequest: (String, JSONValue?) -> Result<JSONValue, RPCError> = { method, _ in .failure(.methodNotFound(method)) }

    private var service: SidecarService?
    private var nextID: Int64 = 1
    private var pending: [RequestID: Pending] = [:]

    /// One request's outcome, filled in by the verb's thread or a task.
    private final class Pending: Sendable {
        let done = DispatchSemaphore(value: 0)
        let outcome = PthreadMutex<Result<JSONValue, RPCError>?>(nil)

        func finish(_ result: Result<JSONValue, RPCError>) {
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    public init(service: SidecarService) { self.service = service }

    public func sendRequest(_ method: String, params: JSONValue) throws(JSONRPCClient.Failure) -> RequestID {
        guard let service else { throw .closed(errno: nil) }
        let id = RequestID.number(nextID)
        nextID += 1
        let pending = Pending()
        self.pending[id] = pending
        switch service.route(forRequest: method) {
        case .failure(let error):
            pending.finish(.failure(error))
        case .immediate(let run):
            pending.finish(Result { () throws(RPCError) in try Self.rpc { try run(params) } })
        case .quickOrConcurrent(let quick, let run):
            if let answer = quick(params, ReaderMoment(receivedAt: POSIX.monotonicNanoseconds(), idle: true)) {
                pending.finish(.success(answer.value))
            } else {
                start(run, params, id, pending)
            }
        case .concurrent(let run):
            start(run, params, id, pending)
        }
        return id
    }

    public func reply(to id: RequestID, timeoutSeconds: Double?) throws(JSONRPCClient.Failure) -> Result<JSONValue, RPCError> {
        guard let pending = pending[id] else { throw .closed(errno: nil) }
        if let timeoutSeconds {
            guard pending.done.wait(timeout: .now() + timeoutSeconds) == .success else { throw .timedOut }
        } else {
            pending.done.wait()
        }
        self.pending[id] = nil
        return pending.outcome.withLock { $0 } ?? .failure(.internalError("the request ended without an answer"))
    }

    public func close() {
        service?.serverWillStop()
        service = nil
    }

    private func start(
        _ run: @escaping @Sendable (JSONValue?, RequestContext) async throws -> JSONValue, _ params: JSONValue, _ id: RequestID,
        _ pending: Pending
    ) {
        let peer = VerbPeer(onNotification: onNotification, onRequest: onRequest)
        Task {
            do {
                pending.finish(.success(try await run(params, RequestContext(id: id, peer: peer))))
            } catch {
                pending.finish(.failure(error as? RPCError ?? .internalError("the method failed unexpectedly (\(type(of: error)))")))
            }
        }
    }

    /// `body`'s result, any error it throws as the ``RPCError`` a server would answer.
    private static func rpc(_ body: () throws -> JSONValue) throws(RPCError) -> JSONValue {
        do { return try body() } catch let error as RPCError { throw error } catch {
            throw .internalError("the method failed unexpectedly (\(type(of: error)))")
        }
    }
}

/// The engine's messages to the verb while a task runs: the verb's handlers, called on the
/// task's thread while the verb's thread waits for the reply (never both at once).
private struct VerbPeer: PeerChannel, @unchecked Sendable {
    let onNotification: (String, JSONValue?) -> Void
    let onRequest: (String, JSONValue?) -> Result<JSONValue, RPCError>

    func notify(_ method: String, params: JSONValue) { onNotification(method, params) }

    /// Runs the handler on a thread of its own, off the cooperative pool: it may wait for the
    /// user (a pasted address read from stdin). A cancelled request stops waiting for it.
    func request(_ method: String, params: JSONValue) async throws -> JSONValue {
        let peer = self
        let answer = HandlerAnswer()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
                answer.wait(with: continuation)
                do {
                    try POSIX.startThread { answer.finish(peer.onRequest(method, params)) }
                } catch {
                    answer.finish(.failure(.internalError("cannot start a thread for \(method): \(error)")))
                }
            }
        } onCancel: {
            answer.finish(.failure(.requestCancelled))
        }
    }
}

/// A handler's answer, given to the waiting request once: the first of the handler's outcome
/// and a cancellation wins.
private final class HandlerAnswer: Sendable {
    private enum Stage {
        case idle
        case waiting(CheckedContinuation<JSONValue, any Error>)
        case done(Result<JSONValue, RPCError>)
        case delivered
    }
    private let stage = PthreadMutex<Stage>(.idle)

    func wait(with continuation: CheckedContinuation<JSONValue, any Error>) {
        let early: Result<JSONValue, RPCError>? = stage.withLock { stage in
            if case .done(let result) = stage {
                stage = .delivered
                return result
            }
            stage = .waiting(continuation)
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func finish(_ result: Result<JSONValue, RPCError>) {
        let waiting: CheckedContinuation<JSONValue, any Error>? = stage.withLock { stage in
            switch stage {
            case .idle:
                stage = .done(result)
                return nil
            case .waiting(let continuation):
                stage = .delivered
                return continuation
            case .done, .delivered: return nil
            }
        }
        waiting?.resume(with: result)
    }
}
