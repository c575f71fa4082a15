import AuthSeams
import POSIXSupport

/// A ``RedirectListener`` in memory: no socket, no port. It parses the redirect URI with the
/// real rule (`RedirectURI`), "binds" a fixed port when the URI names none, and hands each
/// sign-in a ``ScriptedPendingRedirect`` that a ``ScriptedBrowser`` delivers to.
public final class ScriptedRedirectListener: RedirectListener {
    /// The port reported when the configured URI names none (any free port).
    public let port: UInt16
    private let pendings = PthreadMutex<[ScriptedPendingRedirect]>([])

    public init(port: UInt16 = 50_123) { self.port = port }

    /// Every pending redirect started so far, in order.
    public var started: [ScriptedPendingRedirect] { pendings.withLock { $0 } }

    public func start(redirectURI: String) async throws -> any PendingRedirect {
        let parsed = try RedirectURI(parsing: redirectURI)
        let pending = ScriptedPendingRedirect(redirectURI: parsed.concrete(boundPort: parsed.port ?? port))
        pendings.withLock { $0.append(pending) }
        return pending
    }

    /// The newest pending redirect for `redirectURI`, if one was started.
    func pending(for redirectURI: String) -> ScriptedPendingRedirect? {
        pendings.withLock { $0.last { $0.redirectURI == redirectURI } }
    }
}

/// One sign-in's redirect in memory. Like the real listener it takes only a redirect whose
/// `state` is the expected one (others are counted as refused, and it keeps waiting), holds a
/// redirect that arrives before `response` is called, and fails with `closed` once closed.
public final class ScriptedPendingRedirect: PendingRedirect {
    public let redirectURI: String

    private struct State {
        var arrived: [[String: String]] = []
        var expected: String?
        var waiter: CheckedContinuation<AuthorizationResponse, any Error>?
        var refused = 0
        var closed = false
        var timedOut = false
    }
    /// A pthread lock (not `Synchronization.Mutex`): the browser's task and the flow's wait
    /// meet here, and ThreadSanitizer sees only pthread locks synchronise.
    private let state = PthreadMutex(State())

    init(redirectURI: String) { self.redirectURI = redirectURI }

    /// Redirects refused for a wrong or missing state.
    public var refused: Int { state.withLock { $0.refused } }
    /// Whether `close()` was called (the flow must close on every path).
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// A redirect arriving with `parameters` (as the browser would send them).
    func deliver(_ parameters: [String: String]) {
        let waiter: CheckedContinuation<AuthorizationResponse, any Error>? = state.withLock { s in
            guard !s.closed else { return nil }
            guard let expected = s.expected else {
                s.arrived.append(parameters)
                return nil
            }
            guard parameters["state"] == expected else {
                s.refused += 1
                return nil
            }
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: AuthorizationResponse(parameters: parameters))
    }

    /// The wait ends as the real listener's does when its time limit passes (at once: the
    /// time limit passes in virtual time).
    func timeOut() {
        let waiter: CheckedContinuation<AuthorizationResponse, any Error>? = state.withLock { s in
            s.timedOut = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(throwing: LoopbackError.timedOut)
    }

    public func response(expectedState: String, timeout: Duration) async throws -> AuthorizationResponse {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<AuthorizationResponse, any Error>) in
                let outcome: Result<AuthorizationResponse, any Error>? = state.withLock { s in
                    if s.closed || s.expected != nil { return .failure(LoopbackError.closed) }
                    if s.timedOut { return .failure(LoopbackError.timedOut) }
                    // Cancelled before the waiter was registered: `onCancel` found none to fail.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    s.refused += s.arrived.filter { $0["state"] != expectedState }.count
                    if let match = s.arrived.first(where: { $0["state"] == expectedState }) {
                        return .success(AuthorizationResponse(parameters: match))
                    }
                    s.expected = expectedState
                    s.waiter = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            fail(CancellationError())
        }
    }

    public func close() async {
        fail(LoopbackError.closed)
        state.withLock { $0.closed = true }
    }

    private func fail(_ error: any Error) {
        let waiter = state.withLock { s in
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(throwing: error)
    }
}
