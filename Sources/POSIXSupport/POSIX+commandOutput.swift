#if canImport(Glibc)
    import Glibc
#endif

/// Why a command gave no output (``POSIX/commandOutput(_:timeLimit:maxOutput:)``).
public struct CommandFailure: Error, Sendable, Equatable {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }
}

extension POSIX {
    /// How long a command that ended its output (end of file, or it exited) may take to exit
    /// before it is killed with its group: its output is then taken as it is.
    static let exitGrace: Int64 = 1000

    /// Runs a program the user configured (a key command, a client assertion command) and
    /// returns its stdout: started by ``spawn(_:stdout:stderr:newSession:ownGroup:)`` (no shell,
    /// arguments as given, stdin /dev/null, its stderr ours) in a process group of its own; at
    /// most `maxOutput` bytes and `timeLimit`, then the whole group is killed. It must exit 0.
    ///
    /// Nothing here waits without a limit: the output ends at end of file, or soon after the
    /// command exits (a process it left running may hold the pipe: it is not waited for); the
    /// exit is then waited for ``exitGrace`` at most (a command that closed its output and
    /// lingers is killed, its output kept). Whatever the command started in its group is
    /// killed once it is done, so nothing it left holds our stderr. Blocks the calling thread:
    /// call it off Swift's cooperative pool (``offPool(timeLimit:_:)``).
    public static func commandOutput(_ arguments: [String], timeLimit: Duration, maxOutput: Int) -> Result<[UInt8], CommandFailure> {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { return .failure(CommandFailure("pipe: \(lastErrorString)")) }
        let (readEnd, writeEnd) = (pipeFDs[0], pipeFDs[1])
        // Not inherited by programs other threads start (the child gets its copy through dup2).
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        defer { close(readEnd) }
        let spawned = spawn(arguments, stdout: writeEnd, newSession: false, ownGroup: true)
        close(writeEnd)
        let pid: pid_t
        switch spawned {
        case .success(let child): pid = child
        case .failure(.emptyCommand): return .failure(CommandFailure("cannot start: an empty command"))
        case .failure(.nulInArgument): return .failure(CommandFailure("an argument holds a NUL byte"))
        case .failure(.system(let reason)): return .failure(CommandFailure("cannot start: \(reason)"))
        }
        let deadline = monotonicMilliseconds() + milliseconds(timeLimit)
        let output = readOutput(readEnd, of: pid, until: deadline, timeLimit: timeLimit, maxOutput: maxOutput)
        let exit: ChildExit
        if case .success = output {
            exit = waitForExit(pid, until: min(deadline, monotonicMilliseconds() + exitGrace))
        } else {
            exit = .running
        }
        // The group, leader included: the leader is not reaped yet (or, reaped elsewhere, its
        // pid stays reserved while its group has members), so the pgid is still its own.
        kill(-pid, SIGKILL)
        if exit == .running { _ = waitForExit(pid, until: monotonicMilliseconds() + exitGrace) }
        reap(pid)
        guard case .success = output else { return output }
        // unknown: reaped elsewhere (SIGCHLD ignored by whoever started us); running: it ended
        // its output and lingered (killed now). The output is still checked.
        if case .exited(let status) = exit, status != 0 { return .failure(CommandFailure("exited with status \(status)")) }
        return output
    }

    /// Whole milliseconds of `duration` (at least 0).
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? Int64.max / 2 : whole + attoseconds / 1_000_000_000_000_000
    }

    /// Stdout to its end (or to the command's exit, then what is left in the pipe), or why not:
    /// past the deadline or `maxOutput`.
    private static func readOutput(
        _ fd: Int32, of pid: pid_t, until deadline: Int64, timeLimit: Duration, maxOutput: Int
    ) -> Result<[UInt8], CommandFailure> {
        let late = CommandFailure("no answer within \(timeLimit.components.seconds) s; killed")
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        var exited = false
        while true {
            let left = deadline - monotonicMilliseconds()
            guard left > 0 else { return .failure(late) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            // In slices: a command that exited while a process it started holds the pipe is seen.
            let ready = poll(&poller, 1, exited ? 0 : Int32(clamping: min(left, 25)))
            if ready < 0, errno == EINTR { continue }
            if ready == 0 {
                if exited { return .success(output) }  // it exited and the pipe holds nothing more
                exited = waitForExit(pid, until: 0) != .running
                continue
            }
            guard ready > 0 else { return .failure(CommandFailure("poll: \(lastErrorString)")) }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return .success(output) }
            output += buffer.prefix(count)
            if output.count > maxOutput { return .failure(CommandFailure("printed more than \(maxOutput) bytes; killed")) }
        }
    }

    /// How a child ended, seen without reaping it (`waitid` with `WNOWAIT`).
    enum ChildExit: Equatable {
        /// The exit status (128 + signal when killed).
        case exited(Int32)
        /// Still running at the deadline.
        case running
        /// Cannot be known (ECHILD: reaped elsewhere).
        case unknown
    }

    /// Waits for `pid` to end until `deadline` (monotonic milliseconds; a past one: a look
    /// that does not wait), leaving it unreaped.
    static func waitForExit(_ pid: pid_t, until deadline: Int64) -> ChildExit {
        var pause: UInt32 = 1000  // microseconds, doubling to 20 ms
        while true {
            var info = siginfo_t()
            if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) < 0 {
                if errno == EINTR { continue }
                return .unknown
            }
            let child = info._sifields._sigchld  // si_pid 0: still running
            if child.si_pid != 0 {
                guard let termination = Termination(code: info.si_code, status: child.si_status) else { return .unknown }
                return .exited(termination.shellStatus)
            }
            guard monotonicMilliseconds() < deadline else { return .running }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Collects `pid`'s exit status if it has ended (never waits).
    private static func reap(_ pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) < 0, errno == EINTR {}
    }
}
