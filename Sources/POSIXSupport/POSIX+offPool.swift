#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension POSIX {
    /// Runs `body`, which blocks (a command, a file that may hang, a D-Bus call), on a thread of
    /// its own, off Swift's cooperative pool (a few threads that every task shares: one blocked
    /// there holds up unrelated requests), and waits for it without holding a pool thread.
    ///
    /// - Parameter timeLimit: how long to wait at most; then `nil` is returned and the thread
    ///   is left to finish alone (`body` should have a deadline of its own: a command's is
    ///   killed). `nil`: no limit but `body`'s own.
    /// - Returns: `body`'s result, or `nil` past `timeLimit` or when no thread can be started.
    public static func offPool<T: Sendable>(timeLimit: Duration? = nil, _ body: @escaping @Sendable () -> T) async -> T? {
        let waiter = OffPoolWaiter<T>()
        let timer: Task<Void, Never>? = timeLimit.map { limit in
            Task {
                try? await Task.sleep(for: limit)
                if !Task.isCancelled { waiter.finish(nil) }
            }
        }
        defer { timer?.cancel() }
        return await withCheckedContinuation { continuation in
            guard waiter.start(continuation) else { return }
            do {
                try startThread { waiter.finish(body()) }
            } catch {
                waiter.finish(nil)
            }
        }
    }
}

/// One ``POSIX/offPool(timeLimit:_:)`` call: its continuation, resumed once (by the thread's
/// result or the time limit, whichever comes first).
private final class OffPoolWaiter<T: Sendable>: Sendable {
    private let state = PthreadMutex<State>(State())

    private struct State: @unchecked Sendable {
        var continuation: CheckedContinuation<T?, Never>?
        var finished = false
    }

    /// Keeps `continuation`; `false` when the time limit passed already (it is resumed now).
    func start(_ continuation: CheckedContinuation<T?, Never>) -> Bool {
        let late = state.withLock { state -> Bool in
            if state.finished { return true }
            state.continuation = continuation
            return false
        }
        if late { continuation.resume(returning: nil) }
        return !late
    }

    /// Resumes the waiter with `result`, the first time only.
    func finish(_ result: T?) {
        let continuation = state.withLock { state -> CheckedContinuation<T?, Never>? in
            if state.finished { return nil }
            state.finished = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: result)
    }
}
