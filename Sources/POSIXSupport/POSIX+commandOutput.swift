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
    /// Runs a program the user configured (a key command, a client assertion command) and
    /// returns its stdout: started by ``spawn(_:stdout:newSession:)`` (no shell, arguments as
    /// given, stdin /dev/null, its stderr ours); at most `maxOutput` bytes and `timeLimit`,
    /// then it is killed. It must exit 0.
    public static func commandOutput(_ arguments: [String], timeLimit: Duration, maxOutput: Int) -> Result<[UInt8], CommandFailure> {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { return .failure(CommandFailure("pipe: \(lastErrorString)")) }
        let (readEnd, writeEnd) = (pipeFDs[0], pipeFDs[1])
        // Not inherited by programs other threads start (the child gets its copy through dup2).
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        defer { close(readEnd) }
        let spawned = spawn(arguments, stdout: writeEnd, newSession: false)
        close(writeEnd)
        let pid: pid_t
        switch spawned {
        case .success(let child): pid = child
        case .failure(.emptyCommand): return .failure(CommandFailure("cannot start: an empty command"))
        case .failure(.nulInArgument): return .failure(CommandFailure("an argument holds a NUL byte"))
        case .failure(.system(let reason)): return .failure(CommandFailure("cannot start: \(reason)"))
        }
        let output = readOutput(readEnd, timeLimit: timeLimit, maxOutput: maxOutput)
        if case .failure = output { kill(pid, SIGKILL) }
        let status = waitFor(pid)
        guard case .success = output else { return output }
        // nil: reaped elsewhere (SIGCHLD ignored by whoever started us): the output is still checked.
        if let status, status != 0 { return .failure(CommandFailure("exited with status \(status)")) }
        return output
    }

    /// Stdout to its end, or why not: past the time limit or `maxOutput`.
    private static func readOutput(_ fd: Int32, timeLimit: Duration, maxOutput: Int) -> Result<[UInt8], CommandFailure> {
        let deadline =
            monotonicMilliseconds() + timeLimit.components.seconds * 1000
            + timeLimit.components.attoseconds / 1_000_000_000_000_000
        let late = CommandFailure("no answer within \(timeLimit.components.seconds) s; killed")
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let left = deadline - monotonicMilliseconds()
            guard left > 0 else { return .failure(late) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: left))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return .failure(late) }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return .success(output) }
            output += buffer.prefix(count)
            if output.count > maxOutput { return .failure(CommandFailure("printed more than \(maxOutput) bytes; killed")) }
        }
    }

    /// The exit status (128 + signal when killed); `nil` when it cannot be known (ECHILD).
    private static func waitFor(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}
