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
///
/// ``block()`` comes first, before any other thread starts (threads inherit the mask): a
/// signal that arrives before the waiter is then kept pending, not lost and not fatal.
/// ``wait(then:)`` starts the waiter. The stdio server starts it just before it first waits
/// (``JSONRPCServer/run(input:output:beforeFirstWait:)``): a fresh process whose request is
/// already waiting answers it without starting a thread.
enum TerminationSignals {
    /// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts later.
    static func block() {
        var set = signals
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts the thread that waits for SIGTERM or SIGINT (one pending already included) and
    /// then runs `handler`. Without that thread the signals are unblocked: the default
    /// action ends the process.
    static func wait(then handler: @escaping @Sendable () -> Void) {
        let started =
            (try? POSIX.startThread {
                var set = signals
                var signal: Int32 = 0
                while sigwait(&set, &signal) != 0 {}
                handler()
            }) != nil
        var set = signals
        if !started { pthread_sigmask(SIG_UNBLOCK, &set, nil) }
    }

    /// ``block()`` then ``wait(then:)``: for a process that starts the waiter at once.
    static func onTerminate(_ handler: @escaping @Sendable () -> Void) {
        block()
        wait(then: handler)
    }

    private static var signals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        return set
    }
}
