import AuthSeams
import Testing

@testable import Loopback

#if canImport(Glibc)
    import Glibc
#endif

/// SystemBrowserLauncher against real processes: shell scripts that record what they got.
@Suite("SystemBrowserLauncher with real processes")
struct SystemBrowserLauncherTests {
    /// A URL full of shell metacharacters: it must arrive as one untouched argument.
    static let nastyURL = #"https://login.example/authorize?a=1;echo pwned&b=$(touch /tmp/pwned)&c=`id` 'q' "dq" \x | y > z"#

    let directory = TestFiles.makeDirectory()

    /// A script that writes its arguments (NUL-separated) to `name`.args, its fds 0 and 1
    /// and every open descriptor to `name`.fds, then exits with `status` after `sleep` s.
    func recordingScript(_ name: String, status: Int = 0, sleep: String = "0") -> (script: String, args: String, fds: String) {
        let script = "\(directory)/\(name).sh"
        let args = "\(directory)/\(name).args"
        let fds = "\(directory)/\(name).fds"
        TestFiles.write(
            """
            #!/bin/sh
            in0=$(readlink /proc/$$/fd/0); out1=$(readlink /proc/$$/fd/1)
            { echo "0 $in0"; echo "1 $out1"
              for fd in /proc/$$/fd/*; do echo "${fd##*/} $(readlink "$fd")"; done; } > '\(fds).tmp'
            echo "pid $$" >> '\(fds).tmp'
            mv '\(fds).tmp' '\(fds)'
            for a in "$@"; do printf '%s\\0' "$a"; done > '\(args).tmp'
            mv '\(args).tmp' '\(args)'
            sleep \(sleep)
            exit \(status)

            """, to: script, mode: 0o755)
        return (script, args, fds)
    }

    func arguments(in path: String) async -> [String]? {
        guard let text = await TestFiles.waitForFile(path) else { return nil }
        return text.split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test("$BROWSER command: the URL with shell metacharacters arrives intact as one argument")
    func urlIsOneArgument() async throws {
        let recorder = recordingScript("plain")
        try await SystemBrowserLauncher(browser: recorder.script, fallbackCommands: []).open(Self.nastyURL)
        #expect(await arguments(in: recorder.args) == [Self.nastyURL])
        #expect(access("/tmp/pwned", F_OK) != 0)
    }

    @Test("%s is replaced by the URL inside arguments; quoted words are kept")
    func percentS() async throws {
        let recorder = recordingScript("percent")
        let browser = "\(recorder.script) --new-window 'two words' --url=%s --last"
        try await SystemBrowserLauncher(browser: browser, fallbackCommands: []).open(Self.nastyURL)
        #expect(await arguments(in: recorder.args) == ["--new-window", "two words", "--url=" + Self.nastyURL, "--last"])
    }

    @Test("the child reads /dev/null, writes to our stderr, and inherits no socket (not even a listener's)")
    func childDescriptors() async throws {
        let pending = try LoopbackRedirectListener().startListening(redirectURI: "http://localhost")
        defer { Task { await pending.close() } }
        let recorder = recordingScript("fds")
        try await SystemBrowserLauncher(browser: recorder.script, fallbackCommands: []).open("https://example.com/")
        let fds = await TestFiles.waitForFile(recorder.fds) ?? ""
        let entries = Dictionary(
            fds.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.split(separator: " ", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { first, _ in first })
        #expect(entries["0"] == "/dev/null")
        #expect(entries["1"] == Self.readLink("/proc/self/fd/2"))
        let leaked = entries.filter { (Int($0.key) ?? 0) > 2 && $0.value.hasPrefix("socket:") }
        #expect(leaked.isEmpty, "descriptors leaked into the browser: \(leaked)")
    }

    @Test("a command exiting non-zero at once is unavailable; the next one in the list is tried")
    func failingCommand() async throws {
        let failing = recordingScript("failing", status: 3)
        await #expect(throws: BrowserError.unavailable("\(failing.script) exited with status 3")) {
            try await SystemBrowserLauncher(browser: failing.script, fallbackCommands: []).open("https://example.com/")
        }
        let working = recordingScript("working")
        try await SystemBrowserLauncher(browser: "\(failing.script):\(working.script)", fallbackCommands: [])
            .open("https://example.com/x")
        #expect(await arguments(in: working.args) == ["https://example.com/x"])
    }

    @Test("no command, or a command that does not exist: unavailable")
    func noCommand() async throws {
        await #expect(throws: BrowserError.self) {
            try await SystemBrowserLauncher(browser: "", fallbackCommands: []).open("https://example.com/")
        }
        await #expect(throws: BrowserError.self) {
            try await SystemBrowserLauncher(browser: " : ", fallbackCommands: ["no-such-browser-\(getpid())"])
                .open("https://example.com/")
        }
        await #expect(throws: BrowserError.self) {
            try await SystemBrowserLauncher(browser: "/nonexistent/browser", fallbackCommands: []).open("https://example.com/")
        }
        let fallback = recordingScript("fallback")
        try await SystemBrowserLauncher(browser: "", fallbackCommands: [fallback.script]).open("https://example.com/f")
        #expect(await arguments(in: fallback.args) == ["https://example.com/f"])
    }

    @Test(
        "only http(s) URLs are opened (no options, no file:)",
        arguments: ["-version", "file:///etc/passwd", "javascript:alert(1)", "https://a\u{0}b"])
    func invalidURL(url: String) async {
        await #expect(throws: BrowserError.invalidURL) {
            try await SystemBrowserLauncher(browser: "/bin/true", fallbackCommands: []).open(url)
        }
    }

    @Test("a browser still running after the grace period counts as started and is reaped later (no zombie)")
    func longRunningBrowserIsReaped() async throws {
        let recorder = recordingScript("long", sleep: "60")
        try await SystemBrowserLauncher(
            browser: recorder.script, fallbackCommands: [],
            exitGracePeriod: .milliseconds(300)
        ).open("https://example.com/")
        let fds = await TestFiles.waitForFile(recorder.fds) ?? ""
        let pidLine = fds.split(separator: "\n").first { $0.hasPrefix("pid ") }
        let pid = pidLine.flatMap { pid_t($0.dropFirst(4)) } ?? 0
        #expect(pid > 0)
        // open() returned while the browser still runs (it did not wait for it to exit)...
        #expect(kill(pid, 0) == 0, "the browser was not running when open() returned")
        // ...and once it exits, it is reaped.
        kill(pid, SIGKILL)
        var gone = false
        for _ in 0..<100 {
            if kill(pid, 0) == -1 && errno == ESRCH {
                gone = true
                break
            }  // a zombie still answers kill(0)
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(gone, "child \(pid) was not reaped")
    }

    static func readLink(_ path: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return "" }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
