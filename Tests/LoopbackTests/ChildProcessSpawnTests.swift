import POSIXSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `POSIX.spawn`, the one way helper programs are started (browsers, the forward approval
/// command, a key command): what the child inherits, with a real `/bin/sh`.
@Suite("POSIX.spawn: what a helper program inherits")
struct ChildProcessSpawnTests {
    /// Runs `script` in `/bin/sh` with stdout on a pipe; returns what it printed.
    private func run(_ script: String, newSession: Bool) throws -> String {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        // Both ends close-on-exec, so a child another test starts meanwhile does not hold the
        // write end open (the read below would wait for it); the spawn's dup2 onto 1 clears it.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        // A descriptor of ours above 2 without close-on-exec: the child must not get it.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        let spawned = POSIX.spawn(["/bin/sh", "-c", script], stdout: fds[1], newSession: newSession)
        close(fds[1])
        defer { close(fds[0]) }
        let pid = try spawned.get()
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            output += buffer.prefix(count)
        }
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        return String(decoding: output, as: UTF8.self)
    }

    @Test("stdin is /dev/null, nothing above 2 is inherited, stdout is the given descriptor")
    func descriptors() throws {
        // `ls` (exec'd: no pipeline, whose pipes the shell would hold while `ls` lists) lists
        // its own descriptors: what the child inherited, and the directory it is reading.
        let printed = try run("readlink /proc/self/fd/0; exec ls -1 /proc/self/fd", newSession: false)
        let lines = printed.split(separator: "\n")
        #expect(lines.first == "/dev/null")
        let open = lines.dropFirst().compactMap { Int($0) }.sorted()
        #expect(Array(open.prefix(3)) == [0, 1, 2])
        #expect(open.count <= 4)
    }

    @Test("newSession: the child leads its own session; otherwise it stays in ours")
    func session() throws {
        let ownSession = getsid(0)
        let inNew = try run("cut -d' ' -f6 /proc/$$/stat; echo $$", newSession: true).split(separator: "\n")
        #expect(inNew.count == 2 && inNew[0] == inNew[1])
        let inOurs = try run("cut -d' ' -f6 /proc/$$/stat", newSession: false)
        #expect(inOurs.trimmingPrefix(" ") == "\(ownSession)\n")
    }

    @Test("a missing program, an empty command and a NUL byte are reasons, not crashes")
    func failures() {
        #expect(POSIX.spawn([], stdout: 1, newSession: false) == .failure(.emptyCommand))
        #expect(POSIX.spawn(["/bin/echo", "a\u{0}b"], stdout: 1, newSession: false) == .failure(.nulInArgument))
        guard case .failure(.system(let reason)) = POSIX.spawn(["/no/such/program"], stdout: 1, newSession: false) else {
            Issue.record("a missing program started")
            return
        }
        #expect(reason.contains("No such file"))
    }
}
