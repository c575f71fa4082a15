import AuthSeams
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Starts helper programs (browsers, the agent's forward approval command) with `posix_spawnp`: no shell, the arguments are
/// passed as they are.
///
/// The child gets stdin from /dev/null and stdout pointed at our stderr (it can never
/// write into the protocol stream), no descriptor above 2, default signal dispositions and
/// an empty signal mask (we block or ignore some), and its own session (a Ctrl-C meant for
/// us does not close the browser).
public enum ProcessSpawner {
    /// How a child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)
        /// Reaped elsewhere (e.g. SIGCHLD ignored): status unknown.
        case unknown
    }

    /// glibc's `POSIX_SPAWN_SETSID` (not visible from Swift's Glibc module).
    private static let spawnSetSID: Int32 = 0x80

    /// Spawns `arguments[0]` (searched in PATH when it has no `/`); returns the pid or
    /// throws a readable reason.
    public static func spawn(_ arguments: [String]) throws(BrowserError) -> pid_t {
        guard let program = arguments.first, !program.isEmpty else { throw .unavailable("empty command") }
        guard !arguments.contains(where: { $0.utf8.contains(0) }) else { throw .invalidURL }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, 2, 1)
        if let closeFrom = addCloseFrom() { _ = closeFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK) | Int32(POSIX_SPAWN_SETSIGDEF)
        #if canImport(Glibc)
            flags |= spawnSetSID
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let cArguments = arguments.map { strdup($0) }
        defer { for argument in cArguments { free(argument) } }
        guard !cArguments.contains(where: { $0 == nil }) else { throw .unavailable("out of memory") }
        var pid = pid_t()
        let result = posix_spawnp(&pid, program, &actions, &attributes, cArguments + [nil], environ)
        guard result == 0 else { throw .unavailable("\(program): \(POSIX.errorString(result))") }
        return pid
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

    /// The `WIFEXITED`/`WEXITSTATUS`/`WIFSIGNALED`/`WTERMSIG` macros, by hand.
    static func decode(_ status: Int32) -> Termination {
        let low = status & 0x7F
        if low == 0 { return .exited((status >> 8) & 0xFF) }
        if low != 0x7F { return .signaled(low) }
        return .unknown
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34+), looked up at run time.
    private static func addCloseFrom() -> AddCloseFrom? {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }
}
