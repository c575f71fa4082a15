import POSIXSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `POSIX.Termination`, the one decoder of how a child ended (the keeper's `ssh-add`, `exec`,
/// browsers, the assertion and approval commands), with real children of `/bin/sh`.
@Suite("POSIX.Termination: how a real child ended")
struct ChildTerminationTests {
    private func ended(_ script: String) throws -> POSIX.Termination? {
        let pid = try POSIX.spawn(["/bin/sh", "-c", script], stdout: STDERR_FILENO, newSession: false).get()
        return POSIX.waitForTermination(of: pid)
    }

    @Test("an exit status is the status; a death by signal N is .signaled(N), 128 + N as a shell says it")
    func exitAndSignal() throws {
        #expect(try ended("exit 0") == .exited(0))
        #expect(try ended("exit 3") == .exited(3))
        let killed = try ended("kill -TERM $$")
        #expect(killed == .signaled(SIGTERM))
        #expect(killed?.shellStatus == 128 + SIGTERM)
        #expect(POSIX.Termination.exited(7).shellStatus == 7)
    }

    @Test("a child reaped already cannot be waited for: nil, not a made-up status")
    func reapedElsewhere() throws {
        let pid = try POSIX.spawn(["/bin/sh", "-c", "exit 5"], stdout: STDERR_FILENO, newSession: false).get()
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        #expect(POSIX.Termination(waitStatus: status) == .exited(5))
        #expect(POSIX.waitForTermination(of: pid) == nil)
    }

    @Test("the waitid record of a child killed by a signal decodes like its wait status")
    func waitidRecord() {
        #expect(POSIX.Termination(code: Int32(CLD_KILLED), status: SIGKILL) == .signaled(SIGKILL))
        #expect(POSIX.Termination(code: Int32(CLD_EXITED), status: 2) == .exited(2))
        #expect(POSIX.Termination(code: Int32(CLD_STOPPED), status: SIGSTOP) == nil)
    }
}
