import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Layer 3b, a program the user trusts to print the key (`cache.encryption.keyCommand`, e.g.
/// `["pass", "show", "auth-sidecar"]`, `["op", "read", "op://..."]`, a TPM tool): started with
/// `posix_spawnp` (no shell; arguments as given), stdin from /dev/null, its stderr ours; its
/// stdout is the key (32 raw bytes, 64 hex digits or base64). At most ``maxOutput`` bytes
/// and ``timeLimit``; then it is killed. It must exit 0.
public struct KeyCommandKeySource: CacheKeySource {
    public let layer = CacheKeyLayer.keyCommand
    /// The program and its arguments; `nil`: not configured.
    public let arguments: [String]?
    /// The longest output read.
    public static let maxOutput = 4096
    /// How long the command may take.
    public let timeLimit: Duration

    public init(arguments: [String]?, timeLimit: Duration = .seconds(10)) {
        self.arguments = arguments
        self.timeLimit = timeLimit
    }

    public func obtainKey() -> CacheKeyOutcome {
        guard let arguments, let program = arguments.first, !program.isEmpty else {
            return .unavailable(reason: "not configured", enable: "\"cache\": {\"encryption\": {\"keyCommand\": [\"program\", \"arg\"]}}")
        }
        switch run(arguments) {
        case .success(let output):
            guard let key = AESGCMCacheEncryption.key(from: output) else {
                return .unavailable(
                    reason: "\(program) printed no 32-byte key (raw, 64 hex digits or base64)", enable: "fix the key command")
            }
            return .key(key, created: false)
        case .failure(let reason):
            return .unavailable(reason: "\(program): \(reason)", enable: "fix the key command")
        }
    }

    private enum RunResult {
        case success([UInt8])
        case failure(String)
    }

    private func run(_ arguments: [String]) -> RunResult {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { return .failure("pipe: \(POSIX.lastErrorString)") }
        let (readEnd, writeEnd) = (pipeFDs[0], pipeFDs[1])
        // Not inherited by programs other threads start (the child gets its copy through dup2).
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        defer { close(readEnd) }
        let spawned = POSIX.spawn(arguments, stdout: writeEnd, newSession: false)
        close(writeEnd)
        let pid: pid_t
        switch spawned {
        case .success(let child): pid = child
        case .failure(.emptyCommand): return .failure("cannot start: an empty command")
        case .failure(.nulInArgument): return .failure("an argument holds a NUL byte")
        case .failure(.system(let reason)): return .failure("cannot start: \(reason)")
        }
        let output = readOutput(readEnd)
        if case .failure = output { kill(pid, SIGKILL) }
        let status = waitFor(pid)
        guard case .success = output else { return output }
        // nil: reaped elsewhere (SIGCHLD ignored by whoever started us): the key is still checked.
        if let status, status != 0 { return .failure("exited with status \(status)") }
        return output
    }

    /// Stdout to its end, or why not: past the time limit or ``maxOutput``.
    private func readOutput(_ fd: Int32) -> RunResult {
        let deadline =
            POSIX.monotonicMilliseconds() + timeLimit.components.seconds * 1000
            + timeLimit.components.attoseconds / 1_000_000_000_000_000
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let left = deadline - POSIX.monotonicMilliseconds()
            guard left > 0 else { return .failure("no answer within \(timeLimit.components.seconds) s; killed") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: left))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return .failure("no answer within \(timeLimit.components.seconds) s; killed") }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return .success(output) }
            output += buffer.prefix(count)
            if output.count > Self.maxOutput { return .failure("printed more than \(Self.maxOutput) bytes; killed") }
        }
    }

    /// The exit status (128 + signal when killed); `nil` when it cannot be known (ECHILD).
    private func waitFor(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}
