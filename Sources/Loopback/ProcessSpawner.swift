import AuthSeams
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Starts helper programs (browsers, the agent's forward approval command) and reaps them.
///
/// The child's stdout is our stderr (it can never write into the protocol stream) and it has
/// its own session (a Ctrl-C meant for us does not close the browser); the rest is
/// ``POSIX/spawn(_:stdout:stderr:newSession:ownGroup:)``'s.
public enum ProcessSpawner {
    /// How a child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)
        /// Reaped elsewhere (e.g. SIGCHLD ignored): status unknown.
        case unknown
    }

    /// Spawns `arguments[0]` (searched in PATH when it has no `/`) in its own session, its
    /// stdout on our stderr (``POSIX/spawn(_:stdout:stderr:newSession:ownGroup:)``); returns the pid or
    /// throws a readable reason.
    public static func spawn(_ arguments: [String]) throws(BrowserError) -> pid_t {
        switch POSIX.spawn(arguments, stdout: 2, newSession: true) {
        case .success(let pid): return pid
        case .failure(.emptyCommand): throw .unavailable("empty command")
        case .failure(.nulInArgument): throw .invalidURL
        case .failure(.system(let reason)): throw .unavailable("\(arguments[0]): \(reason)")
        }
    }

    /// Polls the child for up to `grace`; nil when it is still running then.
    public static func waitBriefly(_ pid: pid_t, grace: Duration) async throws -> Termination? {
        let deadline = ContinuousClock.now + grace
        var interval = Duration.milliseconds(5)
        while true {
            if let termination = reap(pid) { return termination }
            if ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: interval)
            interval = min(interval * 2, .milliseconds(50))
        }
    }

    /// Reaps `pid` in the background once it exits, so no zombie is left behind. Polls
    /// (no SIGCHLD handler, which would interfere with the rest of the process) from every
    /// 100 ms up to every 2 s; browsers usually detach at once.
    public static func reapInBackground(_ pid: pid_t) {
        Task.detached(priority: .background) {
            var interval = Duration.milliseconds(100)
            while reap(pid) == nil {
                try? await Task.sleep(for: interval)
                interval = min(interval * 2, .seconds(2))
            }
        }
    }

    /// `waitpid(WNOHANG)`: the termination, or nil while the child runs.
    static func reap(_ pid: pid_t) -> Termination? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return decode(status) }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            return .unknown  // ECHILD: already reaped
        }
    }

    /// A `waitpid` status, decoded by ``POSIX/Termination`` (the one decoder).
    static func decode(_ status: Int32) -> Termination {
        switch POSIX.Termination(waitStatus: status) {
        case .exited(let code)?: .exited(code)
        case .signaled(let signal)?: .signaled(signal)
        case nil: .unknown
        }
    }
}
