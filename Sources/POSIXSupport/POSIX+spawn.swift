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
    /// signal mask, and with `newSession` its own session (a Ctrl-C meant for us does not
    /// reach it).
    ///
    /// - Returns: the pid, or why it could not start (a NUL byte in an argument, an empty
    ///   command, `posix_spawnp`'s error).
    public static func spawn(_ arguments: [String], stdout: Int32, stderr: Int32? = nil, newSession: Bool) -> Result<pid_t, SpawnFailure> {
        guard let program = arguments.first, !program.isEmpty else { return .failure(.emptyCommand) }
        guard !arguments.contains(where: { $0.utf8.contains(0) }) else { return .failure(.nulInArgument) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        if let stderr { posix_spawn_file_actions_adddup2(&actions, stderr, 2) }
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
            if newSession { flags |= spawnSetSID }
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let cArguments = arguments.map { strdup($0) }
        defer { for argument in cArguments { free(argument) } }
        guard !cArguments.contains(where: { $0 == nil }) else { return .failure(.system("out of memory")) }
        var pid = pid_t()
        let result = posix_spawnp(&pid, program, &actions, &attributes, cArguments + [nil], environ)
        guard result == 0 else { return .failure(.system(errorString(result))) }
        return .success(pid)
    }

    /// Why ``spawn(_:stdout:newSession:)`` started nothing.
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
