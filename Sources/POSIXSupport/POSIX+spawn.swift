#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension POSIX {
    /// Starts `arguments[0]` (searched in PATH when it has no `/`) with `posix_spawnp`: no
    /// shell, the arguments passed as they are. The one home of how this program starts
    /// helper programs (browsers, the forward approval command, a key command).
    ///
    /// The child gets stdin from /dev/null, `stdout` (a descriptor of ours) as its stdout, ours
    /// as its stderr unless `stderr` names another (a process that outlives us), no
    /// descriptor above 2, default dispositions for the signals we block or ignore, an empty
    /// signal mask, with `newSession` its own session (a Ctrl-C meant for us does not reach
    /// it), and with `ownGroup` its own process group (pgid = its pid: whatever it starts can
    /// be killed with it, `kill(-pid, ...)`).
    ///
    /// - Returns: the pid, or why it could not start (a NUL byte in an argument, an empty
    ///   command, `posix_spawnp`'s error).
    public static func spawn(
        _ arguments: [String], stdout: Int32, stderr: Int32? = nil, newSession: Bool, ownGroup: Bool = false
    ) -> Result<pid_t, SpawnFailure> {
        var flags: Int32 = 0
        #if canImport(Glibc)
            if newSession { flags |= spawnSetSID }
        #endif
        if ownGroup, !newSession { flags |= Int32(POSIX_SPAWN_SETPGROUP) }
        return launch(
            arguments, program: arguments.first ?? "", environment: nil, flags: flags,
            defaultSignals: [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2]
        ) { actions in
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, stdout, 1)
            if let stderr { posix_spawn_file_actions_adddup2(&actions, stderr, 2) }
        }
    }

    /// Starts `arguments[0]` (searched in the `PATH` of `environment` when it has no `/`) as a
    /// foreground child that stands for this process (`auth-sidecar exec`): our stdin and
    /// stderr, `stdout` (a descriptor of ours) as its stdout, no descriptor above 2, default
    /// dispositions and an empty signal mask, `environment` (`NAME=value` entries) as its
    /// environment.
    /// - Returns: the pid, or why it could not start.
    public static func spawnForeground(_ arguments: [String], environment: [String], stdout: Int32) -> Result<pid_t, SpawnFailure> {
        // posix_spawnp searches the PATH of this process: with a PATH of the child's own, the
        // program is found there first.
        let program = arguments.first ?? ""
        let path = environment.last { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) } ?? ""
        let resolved = program.contains("/") ? program : findInPath(program, path) ?? program
        return launch(
            arguments, program: resolved, environment: environment, flags: 0,
            defaultSignals: [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGWINCH]
        ) { actions in
            if stdout != 1 { posix_spawn_file_actions_adddup2(&actions, stdout, 1) }
        }
    }

    /// The one `posix_spawnp` call: `program` run with `arguments` (no shell), the descriptors
    /// `redirect` sets up and none above 2, an empty signal mask, `defaultSignals` at their
    /// default dispositions, `flags` (a new session, or a process group of its own: pgid = its
    /// pid), and `environment` (`nil`: ours).
    private static func launch(
        _ arguments: [String], program: String, environment: [String]?, flags extra: Int32, defaultSignals: [Int32],
        redirect: (inout posix_spawn_file_actions_t) -> Void
    ) -> Result<pid_t, SpawnFailure> {
        guard !program.isEmpty else { return .failure(.emptyCommand) }
        guard !(arguments + (environment ?? [])).contains(where: { $0.utf8.contains(0) }) else { return .failure(.nulInArgument) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        redirect(&actions)
        if let closeFrom = addCloseFrom() { _ = closeFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in defaultSignals { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        if extra & Int32(POSIX_SPAWN_SETPGROUP) != 0 { posix_spawnattr_setpgroup(&attributes, 0) }
        posix_spawnattr_setflags(&attributes, Int16(Int32(POSIX_SPAWN_SETSIGMASK) | Int32(POSIX_SPAWN_SETSIGDEF) | extra))

        let cArguments = arguments.map { strdup($0) }
        let cEnvironment = (environment ?? []).map { strdup($0) }
        defer { for pointer in cArguments + cEnvironment { free(pointer) } }
        guard !(cArguments + cEnvironment).contains(where: { $0 == nil }) else { return .failure(.system("out of memory")) }
        var pid = pid_t()
        let result =
            environment == nil
            ? posix_spawnp(&pid, program, &actions, &attributes, cArguments + [nil], environ)
            : posix_spawnp(&pid, program, &actions, &attributes, cArguments + [nil], cEnvironment + [nil])
        guard result == 0 else { return .failure(.system(errorString(result))) }
        return .success(pid)
    }

    /// The first executable `name` in the `:`-separated `path`.
    private static func findInPath(_ name: String, _ path: String) -> String? {
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = directory + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Why ``spawn(_:stdout:stderr:newSession:ownGroup:)`` started nothing.
    public enum SpawnFailure: Error, Equatable, Sendable {
        case emptyCommand
        case nulInArgument
        /// `posix_spawnp` (or memory) failed: the reason.
        case system(String)
    }

    /// glibc's `POSIX_SPAWN_SETSID` (not visible from Swift's Glibc module).
    private static let spawnSetSID: Int32 = 0x80

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34+), looked up at run time.
    private static func addCloseFrom() -> AddCloseFrom? {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }
}
