#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension POSIX {
    /// How a child process ended: the one decoding of a wait status (`waitpid`) and of a
    /// `waitid` record, for every caller that runs a child (browsers, `exec`, `ssh-add`, the
    /// assertion and approval commands).
    public enum Termination: Equatable, Sendable {
        /// It exited with this status (0 to 255).
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)

        /// A `waitpid` status (the `WIFEXITED`/`WEXITSTATUS`/`WIFSIGNALED`/`WTERMSIG` macros,
        /// which Swift does not import); `nil` for a stopped or continued child.
        public init?(waitStatus status: Int32) {
            let low = status & 0x7F
            if low == 0 {
                self = .exited((status >> 8) & 0xFF)
            } else if low != 0x7F {
                self = .signaled(low)
            } else {
                return nil
            }
        }

        /// A `waitid` record's `si_code` and `si_status`; `nil` for a stopped or continued child.
        public init?(code: Int32, status: Int32) {
            switch code {
            case Int32(CLD_EXITED): self = .exited(status & 0xFF)
            case Int32(CLD_KILLED), Int32(CLD_DUMPED): self = .signaled(status)
            default: return nil
            }
        }

        /// As a shell reports it: the exit status, or 128 + the signal.
        public var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .signaled(let signal): 128 + signal
            }
        }
    }

    /// Waits for `pid` to end and reaps it (EINTR retried); `nil` when it cannot be waited for
    /// (ECHILD: reaped elsewhere, or not our child).
    public static func waitForTermination(of pid: pid_t) -> Termination? {
        var status: Int32 = 0
        while true {
            if waitpid(pid, &status, 0) == pid {
                if let termination = Termination(waitStatus: status) { return termination }
                continue  // stopped or continued: not the end
            }
            guard errno == EINTR else { return nil }
        }
    }
}
