import AuthSeams
import POSIXSupport

/// What the redirect listener's connection threads and the async API share, under one lock
/// (a ``PthreadMutex``, which ThreadSanitizer understands): the expected state, the outcome
/// and who waits for it, and the stop handshake. Parked requests wait on its condition until
/// the expected state is named or a stop is asked.
final class RedirectExchange: Sendable {
    typealias Outcome = Result<AuthorizationResponse, any Error>

    /// What a parked request learns.
    enum ExpectedState: Equatable {
        case named(String)
        case stopping
    }

    private struct State {
        var expectedState: String?
        /// A matching request was accepted: its page is being written, then it is delivered.
        var claimed = false
        var outcome: Outcome?
        var waiter: CheckedContinuation<Outcome, Never>?
        var stopRequested = false
        var stopped = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = PthreadMutex(State())

    /// Records the expected state and wakes parked requests.
    /// Throws `.closed` when a wait already began or the listener stopped.
    func beginWaiting(expectedState: String) throws(LoopbackError) {
        let accepted = state.withLockAndBroadcast { state -> Bool in
            guard state.expectedState == nil, !state.stopRequested, !state.stopped, state.outcome == nil else { return false }
            state.expectedState = expectedState
            return true
        }
        if !accepted { throw LoopbackError.closed }
    }

    /// Waits (on a connection's thread) until the expected state is named or a stop is asked;
    /// nil when `deadline` (monotonic milliseconds) passes first.
    func awaitExpectedState(until deadline: Int64) -> ExpectedState? {
        state.wait(until: deadline) { state in
            if state.stopRequested || state.stopped || state.claimed || state.outcome != nil { return .stopping }
            return state.expectedState.map { .named($0) }
        }
    }

    /// Claims the one sign-in answer for a matching request; false when one was claimed
    /// already or the wait is over.
    func claim() -> Bool {
        state.withLock { state in
            guard !state.claimed, state.outcome == nil else { return false }
            state.claimed = true
            return true
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
        let waiter = state.withLockAndBroadcast { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }

    /// Marks the wait over (non-blocking; safe from deinit): parked requests are answered.
    /// The caller stops the server.
    func requestStop() {
        state.withLockAndBroadcast { $0.stopRequested = true }
    }

    /// Suspends until the server has stopped listening.
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

    /// Called by the server's thread as its last act, after closing the listening socket:
    /// fails a pending wait with `.closed` and releases everyone waiting for the stop.
    func serverDidStop() {
        let (waiter, stopWaiters, outcome) = state.withLockAndBroadcast { state in
            state.stopped = true
            var waiter: CheckedContinuation<Outcome, Never>?
            if state.outcome == nil {
                state.outcome = .failure(LoopbackError.closed)
                waiter = state.waiter
                state.waiter = nil
            }
            defer { state.stopWaiters = [] }
            return (waiter, state.stopWaiters, state.outcome)
        }
        if let waiter, let outcome { waiter.resume(returning: outcome) }
        for continuation in stopWaiters { continuation.resume() }
    }
}
