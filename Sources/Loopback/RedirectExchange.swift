import AuthSeams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the serving thread and the async API share, under one lock (a ``PthreadMutex``, which
/// ThreadSanitizer understands): the expected state, the outcome and who waits for it, and the
/// stop handshake.
final class RedirectExchange: Sendable {
    typealias Outcome = Result<AuthorizationResponse, any Error>

    private struct State {
        var expectedState: String?
        var outcome: Outcome?
        var waiter: CheckedContinuation<Outcome, Never>?
        var stopRequested = false
        var stopped = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = PthreadMutex(State())
    /// Written to wake the serving thread; closed by the thread (under the lock) when it stops.
    private let wakeFD: Int32

    init(wakeFD: Int32) {
        self.wakeFD = wakeFD
    }

    /// The expected state, once `response(expectedState:timeout:)` has named it.
    var expectedState: String? { state.withLock { $0.expectedState } }

    /// Whether `close()` (or deinit) asked the thread to stop.
    var stopRequested: Bool { state.withLock { $0.stopRequested } }

    /// Records the expected state and wakes the thread (parked requests get decided).
    /// Throws `.closed` when a wait already began or the listener stopped.
    func beginWaiting(expectedState: String) throws(LoopbackError) {
        try state.withLock { (state) throws(LoopbackError) in
            guard state.expectedState == nil, !state.stopRequested, !state.stopped, state.outcome == nil else {
                throw LoopbackError.closed
            }
            state.expectedState = expectedState
            wakeLocked(state)
        }
    }

    /// Suspends until an outcome is set (at once if it already is).
    func waitForOutcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Outcome? in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Sets the outcome unless one is already set, and resumes the waiter.
    func finish(_ outcome: Outcome) {
        let waiter = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }

    /// Asks the serving thread to stop (non-blocking; safe from deinit).
    func requestStop() {
        state.withLock { state in
            guard !state.stopRequested else { return }
            state.stopRequested = true
            wakeLocked(state)
        }
    }

    /// Suspends until the serving thread has closed every descriptor.
    func waitUntilStopped() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.stopped { return true }
                state.stopWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Called by the serving thread as its very last act, after closing its sockets:
    /// fails a pending wait with `.closed` (or `failure`), closes the wake descriptors
    /// and releases everyone waiting for the stop.
    func threadDidStop(wakeReadFD: Int32, failure: LoopbackError?) {
        let (waiter, stopWaiters, outcome) = state.withLock { state in
            state.stopped = true
            close(wakeReadFD)
            close(wakeFD)
            var waiter: CheckedContinuation<Outcome, Never>?
            if state.outcome == nil {
                state.outcome = .failure(failure ?? .closed)
                waiter = state.waiter
                state.waiter = nil
            }
            defer { state.stopWaiters = [] }
            return (waiter, state.stopWaiters, state.outcome)
        }
        if let waiter, let outcome { waiter.resume(returning: outcome) }
        for continuation in stopWaiters { continuation.resume() }
    }

    private func wakeLocked(_ state: borrowing State) {
        guard !state.stopped else { return }
        var byte: UInt8 = 1
        _ = send(wakeFD, &byte, 1, Int32(MSG_NOSIGNAL))  // EAGAIN: a wake-up is already pending
    }
}
