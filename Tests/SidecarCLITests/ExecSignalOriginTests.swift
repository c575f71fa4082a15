import Testing

@testable import SidecarCLI

#if canImport(Glibc)
    import Glibc
#endif

/// `exec` passes on a signal sent to it, not one the terminal sent to its whole foreground
/// group (the child got that one too).
@Suite struct ExecSignalOriginTests {
    @Test func theTerminalsSignalsAreNotSentTwice() {
        for signal in [SIGINT, SIGQUIT, SIGWINCH, SIGHUP] {
            #expect(SignalOrigin.reachedChild(signal: signal, code: 0x80, childGroup: 40, ownGroup: 40, sessionLeader: false))
        }
    }

    @Test func signalsSentToExecAreForwarded() {
        // kill (SI_USER), sigqueue (SI_QUEUE), tgkill (SI_TKILL)
        for code: Int32 in [0, -1, -6] {
            #expect(!SignalOrigin.reachedChild(signal: SIGTERM, code: code, childGroup: 40, ownGroup: 40, sessionLeader: false))
            #expect(!SignalOrigin.reachedChild(signal: SIGINT, code: code, childGroup: 40, ownGroup: 40, sessionLeader: false))
        }
    }

    @Test func theKernelsSignalIsForwardedWhenItCannotHaveReachedTheChild() {
        // a child in another group (or gone: getpgid fails), or a hang-up sent to the session leader alone
        #expect(!SignalOrigin.reachedChild(signal: SIGINT, code: 0x80, childGroup: 41, ownGroup: 40, sessionLeader: false))
        #expect(!SignalOrigin.reachedChild(signal: SIGINT, code: 0x80, childGroup: -1, ownGroup: 40, sessionLeader: false))
        #expect(!SignalOrigin.reachedChild(signal: SIGHUP, code: 0x80, childGroup: 40, ownGroup: 40, sessionLeader: true))
        #expect(SignalOrigin.reachedChild(signal: SIGINT, code: 0x80, childGroup: 40, ownGroup: 40, sessionLeader: true))
    }
}
