import AuthSeams
import AuthTestSupport
import POSIXSupport
import Synchronization
import Testing

@testable import AuthCore

#if canImport(Glibc)
    import Glibc
#endif

/// The client assertion sources, each read afresh: CI token endpoints over a scripted
/// transport, a command, a file.
@Suite struct ClientAssertionSourceTests {
    static let jwt = Tokens.jwt(#"{"sub":"job","exp":1700000000}"#)

    @Test func azurePipelinesAsksForTheServiceConnectionsToken() async throws {
        let http = FakeHTTPTransport { _ in HTTPResponse(status: 200, body: Array(#"{"oidcToken":"\#(Self.jwt)"}"#.utf8)) }
        let variables = ["SYSTEM_OIDCREQUESTURI": "https://dev.azure.example/oidc?x=1", "SYSTEM_ACCESSTOKEN": "sys-token"]
        let source = AzurePipelinesAssertionSource(serviceConnectionId: "sc 1", variable: { variables[$0] })
        let assertion = try await source.assertion(transport: http)
        #expect(assertion.jwt == Self.jwt && assertion.expiresOn == 1_700_000_000)
        let request = try #require(http.requests.first)
        #expect(request.method == "POST" && request.url == "https://dev.azure.example/oidc?x=1&api-version=7.1&serviceConnectionId=sc%201")
        #expect(request.headers.contains { $0.name == "Authorization" && $0.value == "Bearer sys-token" })
    }

    @Test func gitHubActionsAddsTheAudienceAndNamesMissingVariables() async throws {
        let http = FakeHTTPTransport { _ in HTTPResponse(status: 200, body: Array(#"{"count":1,"value":"\#(Self.jwt)"}"#.utf8)) }
        let variables = ["ACTIONS_ID_TOKEN_REQUEST_URL": "https://pipelines.example/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "req"]
        let source = GitHubActionsAssertionSource(variable: { variables[$0] })
        #expect(try await source.assertion(transport: http).jwt == Self.jwt)
        #expect(http.requests.first?.url == "https://pipelines.example/token?api-version=2.0&audience=api%3A%2F%2FAzureADTokenExchange")
        let unset = GitHubActionsAssertionSource(variable: { _ in nil })
        let error = await #expect(throws: AuthError.self) { try await unset.assertion(transport: http) }
        #expect(error?.message.contains("id-token: write") == true && error?.message.contains("GitHub Actions") == true)
    }

    @Test func anEndpointsRefusalOrOddAnswerIsNamed() async throws {
        let variables = ["ACTIONS_ID_TOKEN_REQUEST_URL": "https://pipelines.example/t", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "req"]
        let source = GitHubActionsAssertionSource(variable: { variables[$0] })
        for (status, body) in [(403, "{}"), (200, "[]"), (200, #"{"value": 1}"#), (200, #"{"value": "no-jwt"}"#)] {
            let http = FakeHTTPTransport { _ in HTTPResponse(status: status, body: Array(body.utf8)) }
            let error = await #expect(throws: AuthError.self) { try await source.assertion(transport: http) }
            #expect(error?.message.hasPrefix("the client assertion from GitHub Actions could not be read") == true)
        }
    }

    @Test func aCommandsOutputIsTheAssertion() async throws {
        let source = CommandAssertionSource(arguments: ["/bin/sh", "-c", "printf '%s\\n' '\(Self.jwt)'"])
        #expect(try await source.assertion(transport: FakeHTTPTransport { _ in HTTPResponse(status: 500) }).jwt == Self.jwt)
        let failing = CommandAssertionSource(arguments: ["/bin/sh", "-c", "exit 3"])
        let error = await #expect(throws: AuthError.self) {
            try await failing.assertion(transport: FakeHTTPTransport { _ in HTTPResponse(status: 500) })
        }
        #expect(error?.message.contains("exited with status 3") == true)
    }

    @Test func aMissingFileIsNamed() async throws {
        let source = FileAssertionSource(path: "/nonexistent/azure-identity-token")
        let error = await #expect(throws: AuthError.self) {
            try await source.assertion(transport: FakeHTTPTransport { _ in HTTPResponse(status: 500) })
        }
        #expect(error?.message.contains("file /nonexistent/azure-identity-token") == true && error?.kind == .invalidConfiguration)
    }

    // Issue #47: what runs or reads outside the process never waits without a limit, and
    // nothing computed from what it gives traps.

    static let none = FakeHTTPTransport { _ in HTTPResponse(status: 500) }

    /// What a shell command printed (3 s limit), and how long it took: timed on this thread,
    /// around the blocking call (a loaded pool does not count).
    static func timed(_ script: String) -> (Result<[UInt8], CommandFailure>, Duration) {
        let clock = ContinuousClock()
        let started = clock.now
        let result = POSIX.commandOutput(["/bin/sh", "-c", script], timeLimit: .seconds(3), maxOutput: 4096)
        return (result, clock.now - started)
    }

    /// Whether process `pid` is gone or a zombie (killed; its reaper may not have run yet).
    static func isGone(_ pid: Int32) async -> Bool {
        for _ in 0..<40 {
            let stat = procFileText("/proc/\(pid)/stat") ?? ""
            if stat.isEmpty || stat.contains(") Z ") { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    static func pid(inFile path: String) -> Int32? {
        procFileText(path).flatMap { Int32($0.filter(\.isNumber)) }
    }

    @Test func aCommandThatClosesItsOutputAndLingersIsNotWaitedFor() async throws {
        let (result, took) = Self.timed("echo '\(Self.jwt)'; exec >&-; sleep 20")
        #expect(try result.get() == Array("\(Self.jwt)\n".utf8))
        #expect(took < .seconds(2.5))
    }

    @Test func aProcessTheCommandLeftHoldingItsOutputIsNotWaitedForAndIsKilled() async throws {
        let file = "/tmp/assertion-grandchild-\(getpid())"
        defer { unlink(file) }
        let (result, took) = Self.timed("echo '\(Self.jwt)'; sleep 21 & echo $! > \(file)")
        #expect(try result.get() == Array("\(Self.jwt)\n".utf8))
        #expect(took < .seconds(2.5))
        let grandchild = try #require(Self.pid(inFile: file))
        #expect(await Self.isGone(grandchild))
    }

    @Test func aCommandPastItsTimeLimitIsKilledWithItsGroup() async throws {
        let file = "/tmp/assertion-stuck-\(getpid())"
        defer { unlink(file) }
        let (result, took) = Self.timed("sleep 22 & echo $! > \(file); sleep 23")
        guard case .failure(let error) = result else {
            Issue.record("a stuck command gave an assertion")
            return
        }
        #expect(error.reason == "no answer within 3 s; killed")
        #expect(took < .seconds(5))
        let grandchild = try #require(Self.pid(inFile: file))
        #expect(await Self.isGone(grandchild))
    }

    @Test func aFIFOOrAFileOthersMayWriteIsRefusedAtOnce() async throws {
        let directory = "/tmp/assertion-files-\(getpid())"
        mkdir(directory, 0o700)
        defer {
            unlink(directory + "/fifo")
            unlink(directory + "/token")
            rmdir(directory)
        }
        mkfifo(directory + "/fifo", 0o600)
        let clock = ContinuousClock()
        let started = clock.now
        let fifo = await #expect(throws: AuthError.self) {
            try await FileAssertionSource(path: directory + "/fifo").assertion(transport: Self.none)
        }
        // A FIFO with no writer would block for ever; alone this takes milliseconds, beside the whole
        // suite running in parallel (its commands and waits) up to a few seconds (3.8 s seen).
        #expect(clock.now - started < .seconds(20))
        #expect(fifo?.message.contains("it is a FIFO, not a regular file") == true)

        let fd = open(directory + "/token", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        _ = Self.jwt.withCString { write(fd, $0, strlen($0)) }
        close(fd)
        #expect(try await FileAssertionSource(path: directory + "/token").assertion(transport: Self.none).jwt == Self.jwt)
        for (mode, who) in [(0o620, "its group"), (0o602, "others")] {
            chmod(directory + "/token", mode_t(mode))
            let refused = await #expect(throws: AuthError.self) {
                try await FileAssertionSource(path: directory + "/token").assertion(transport: Self.none)
            }
            #expect(refused?.message.contains("writable by \(who)") == true && refused?.kind == .invalidConfiguration)
        }
    }

    @Test func aTransientFailureOfTheEndpointIsTriedAgain() async throws {
        let answers = Counter()
        let http = FakeHTTPTransport { _ in
            answers.next() == 0
                ? HTTPResponse(status: 503) : HTTPResponse(status: 200, body: Array(#"{"value":"\#(Self.jwt)"}"#.utf8))
        }
        let variables = ["ACTIONS_ID_TOKEN_REQUEST_URL": "https://pipelines.example/t", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "req"]
        let source = GitHubActionsAssertionSource(variable: { variables[$0] })
        #expect(try await source.assertion(transport: http).jwt == Self.jwt)
        #expect(http.requests.count == 2)
    }

    /// The inputs that crashed the process (SIGILL) before: `exp` near Int64.min or max.
    @Test(arguments: [Int64.min, Int64.min + 1, Int64.max, -1])
    func anExpiryOutOfRangeIsClampedAndTrapsNothing(exp: Int64) {
        let assertion = ClientAssertion(jwt: Tokens.jwt(#"{"sub":"job","exp":\#(exp)}"#))
        #expect(assertion.expiresOn.map(ClientAssertion.plausibleTimes.contains) == true)
        for now in [Int64.min, -1, 0, 1_700_000_000, Int64.max] {
            #expect(!assertion.lifeText(now: now).isEmpty)
        }
    }
}

/// Counts calls, from any thread.
private final class Counter: Sendable {
    private let count = Mutex(0)

    func next() -> Int {
        count.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}

/// A small file's text (`/proc`), or `nil`.
private func procFileText(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 4096)
    let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    return String(decoding: bytes.prefix(Swift.max(got, 0)), as: UTF8.self)
}
