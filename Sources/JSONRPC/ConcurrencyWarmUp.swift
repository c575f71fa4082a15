import POSIXSupport

/// Makes the concurrency runtime create what it creates lazily (its worker threads, and the
/// event loop libdispatch opens with `epoll_create1` for timers) while descriptors are free:
/// libdispatch traps (SIGILL) when that call fails later with EMFILE, so a server that may run
/// out of descriptors under load calls this once at start.
public enum ConcurrencyWarmUp {
    /// Runs a task that sleeps a moment (a timer) and waits for it, at most a second.
    public static func run() {
        let done = PthreadMutex(false)
        Task.detached {
            try? await Task.sleep(for: .milliseconds(1))
            done.withLockAndBroadcast { $0 = true }
        }
        _ = done.wait(until: POSIX.monotonicMilliseconds() + 1000) { $0 ? true : nil }
    }
}
