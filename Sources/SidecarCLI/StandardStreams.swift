import JSONRPC
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps the real stdout for protocol messages only.
enum StandardStreams {
    /// Duplicates fd 1 to a private descriptor (close-on-exec, so browsers and other children
    /// never inherit it), then points fd 1 at stderr: a stray `print` or a library writing to
    /// stdout lands in the log, not in the protocol stream. Also ignores SIGPIPE, so a
    /// vanished reader is a write error, not a killed process.
    static func reserveStdoutForProtocol() -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let protocolFD = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
        guard protocolFD >= 0 else { return STDOUT_FILENO }
        dup2(STDERR_FILENO, STDOUT_FILENO)
        return protocolFD
    }
}

/// SIGTERM and SIGINT handling, off the signal handler: a thread waits for them with
/// `sigwait` and runs the callback.
enum TerminationSignals {
    static func onTerminate(_ handler: @escaping @Sendable () -> Void) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)  // inherited by threads started after this
        let waiting = set
        let started =
            (try? POSIX.startThread {
                var set = waiting
                var signal: Int32 = 0
                while sigwait(&set, &signal) != 0 {}
                handler()
            }) != nil
        if !started { pthread_sigmask(SIG_UNBLOCK, &set, nil) }  // no waiter: the default action ends the process
    }
}
