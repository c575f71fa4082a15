import Agent
import AuthCore
import AuthSeams
import AuthTestSupport
import JSON
import Logging
import POSIXSupport
import Sidecar
import SidecarTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The agent's forward socket connected directly (no SSH): an agent in this process with the
/// auth dependencies faked, a sign-in on the main socket, then the forward socket's policy:
/// what it answers, what never crosses it (checked on every byte it returns), what it refuses,
/// and a sign-in approved by the forwardApproval command.
@Suite(.serialized) struct ForwardSocketTests {
    static let refreshToken = "rt-forward-never-crosses"
    /// The header of every ID token the fake service issues (the access tokens are not JWTs).
    static let idTokenHeader = String(Tokens.jwt(Tokens.idTokenClaims).split(separator: ".")[0])

    @Test func answersTheAllowedMethodsWithoutRefreshOrIDTokens() async throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        try await agent.signInOnMainSocket()
        let remote = try agent.connect(agent.forwardPath)
        let hello = try await remote.call("initialize", [:])
        #expect(hello["result"]?["agent"]?["forwarded"] == true)
        #expect(hello["result"]?["agent"] == ["forwarded": true], "nothing about the laptop's agent: no pid, no host")
        let methods = hello["result"]?["capabilities"]?["methods"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(methods.contains("acquireTokenSilent") && !methods.contains("signout") && !methods.contains("setCurrentAccount"))
        let token = try await remote.call("acquireTokenSilent", ["scopes": ["User.Read"]])
        #expect(token["result"]?["accessToken"]?.stringValue?.hasPrefix("at-") == true)
        #expect(token["result"]?["account"]?["username"] != nil)
        #expect(token["result"]?["idToken"] == nil && token["result"]?["account"]?["idTokenClaims"] == nil)
        let accounts = try await remote.call("getAccounts")
        #expect(accounts["result"]?["accounts"]?.arrayValue?.count == 1)
        #expect(accounts["result"]?["accounts"]?.arrayValue?.first?["idTokenClaims"] == nil)
        let current = try await remote.call("getCurrentAccount")
        #expect(current["result"]?["account"]?["homeAccountId"] != nil && current["result"]?["account"]?["idTokenClaims"] == nil)
        #expect(try await remote.call("getDeviceInformation")["result"]?["deviceMode"] != nil)
        let graph = try await remote.call("callGraph", ["path": "/me"])
        #expect(graph["result"]?["status"] == 200)
        // The main socket's hello lists the forwarded session.
        let laptop = try agent.connect(agent.mainPath)
        let sessions = try await laptop.call("initialize", [:])["result"]?["agent"]?["forwardedSessions"]?.arrayValue
        #expect(sessions?.count == 1)
        let wire = remote.received
        #expect(!wire.contains(Self.refreshToken) && !wire.contains(Self.idTokenHeader))
        #expect(!wire.contains("idToken"))
        #expect(agent.log.contains("token handed out through the forward socket"))
        #expect(!agent.log.contains("at-1") && !agent.log.contains(Self.refreshToken))
    }

    @Test func refusesWhatChangesTheLaptopAndUnlistedScopes() async throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        try await agent.signInOnMainSocket()
        let remote = try agent.connect(agent.forwardPath)
        // The remote cannot widen the policy or choose the laptop's cache, key or browser: ignored.
        let hello = try await remote.call(
            "initialize",
            ["forwardScopes": ["Mail.Read"], "forwardApproval": ["/bin/true"], "cache": ["path": "/tmp/elsewhere.json"], "browser": "client"])
        #expect(
            hello["result"]?["configuration"]
                == ["clientId": .string(InProcessServer.clientId), "authority": "https://login.microsoftonline.com/common", "scopes": ["User.Read"]],
            "only the application, the authority and the default scopes: nothing about the laptop's cache, key or browser")
        #expect(hello["result"]?["forward"] == ["scopes": ["User.Read"], "signIn": "deny"])
        #expect(hello["result"]?["cacheProtection"] == nil)
        for method in ["signout", "setCurrentAccount"] {
            let error = try await remote.call(method, [:])["error"]
            #expect(error?["code"] == -51014 && error?["data"]?["name"] == "forwardMethodRefused")
        }
        let mail = try await remote.call("acquireTokenSilent", ["scopes": ["Mail.Read"]])["error"]
        #expect(mail?["data"]?["name"] == "forwardScopeRefused" && mail?["data"]?["key"] == "forwardScopes")
        #expect(mail?["message"]?.stringValue?.contains("forwardScopes") == true)
        let signIn = try await remote.call("acquireToken", ["scopes": ["User.Read"]])["error"]
        #expect(signIn?["data"]?["name"] == "forwardSignInRefused")
        #expect(signIn?["message"]?.stringValue?.contains("forwardApproval") == true)
        let other = try agent.connect(agent.forwardPath)
        let refused = try await other.call("initialize", ["clientId": "99999999-2222-3333-4444-555555555555"])["error"]
        #expect(refused?["data"]?["name"] == "forwardConfigurationRefused" && refused?["data"]?["member"] == "clientId")
        // Still signed in on the laptop.
        let laptop = try agent.connect(agent.mainPath)
        _ = try await laptop.call("initialize", [:])
        #expect(try await laptop.call("getAccounts")["result"]?["accounts"]?.arrayValue?.count == 1)
        #expect(!remote.received.contains(Self.refreshToken))
    }

    @Test func signsInOnTheLaptopWhenTheApprovalCommandSaysYes() async throws {
        let asked = "/tmp/auth-sidecar-approval-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(asked) }
        let agent = try TestAgent(approval: .command(["/bin/sh", "-c", "printf '%s' \"$1\" > \(asked)", "approve"]))
        defer { agent.stop() }
        let remote = try agent.connect(agent.forwardPath)
        _ = try await remote.call("initialize", [:])
        let signIn = try await remote.call("acquireToken", ["scopes": ["User.Read"]])
        #expect(signIn["result"]?["accessToken"] != nil && signIn["result"]?["idToken"] == nil)
        #expect(agent.fakes.browser.openedURLs.count == 1, "the laptop's browser opened")
        let question = ProcessEnvironment.readTextFile(asked) ?? ""
        #expect(question.contains("forwarded session") && question.contains("User.Read"))
        #expect(!remote.received.contains(Self.refreshToken))
    }

    @Test func aDecliningApprovalCommandRefusesTheSignIn() async throws {
        let agent = try TestAgent(approval: .command(["/bin/false"]))
        defer { agent.stop() }
        let remote = try agent.connect(agent.forwardPath)
        _ = try await remote.call("initialize", [:])
        let error = try await remote.call("acquireToken", ["scopes": ["User.Read"]])["error"]
        #expect(error?["data"]?["name"] == "forwardSignInRefused")
        #expect(error?["message"]?.stringValue?.contains("declined") == true)
        #expect(agent.fakes.browser.openedURLs.isEmpty)
    }
}

extension ForwardSocketTests {
    @Test func handsOutNothingWithoutForwardScopes() async throws {
        let agent = try TestAgent(forwardScopes: nil)
        defer { agent.stop() }
        try await agent.signInOnMainSocket()
        #expect(agent.log.contains("forwardScopes is empty"))
        let remote = try agent.connect(agent.forwardPath)
        let error = try await remote.call("acquireTokenSilent", ["scopes": ["User.Read"]])["error"]
        #expect(error?["data"]?["name"] == "forwardScopeRefused")
        #expect(try await remote.call("callGraph", ["path": "/me"])["error"]?["data"]?["name"] == "forwardScopeRefused")
    }

    @Test func asksOneQuestionAtATime() async throws {
        let asking = "/tmp/auth-sidecar-asking-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(asking) }
        let agent = try TestAgent(approval: .command(["/bin/sh", "-c", "touch \(asking); sleep 1"]))
        defer { agent.stop() }
        let first = try agent.connect(agent.forwardPath)
        let second = try agent.connect(agent.forwardPath)
        _ = try await first.call("initialize", [:])
        _ = try await second.call("initialize", [:])
        async let asked = first.call("acquireToken", ["scopes": ["User.Read"]])
        for _ in 0..<1_000 where access(asking, F_OK) != 0 { usleep(5_000) }  // the first question is being asked
        let refused = try await second.call("acquireToken", ["scopes": ["User.Read"]])["error"]
        #expect(refused?["message"]?.stringValue?.contains("another forwarded sign-in is waiting for approval") == true)
        #expect(try await asked["result"]?["accessToken"] != nil)
    }
}

/// An agent in this process, on two sockets in a fresh directory, with faked auth dependencies.
final class TestAgent: Sendable {
    let directory: String
    let mainPath: String
    let forwardPath: String
    let fakes: InProcessServer.Fakes
    private let server: AgentServer
    private let logs: LogCapture

    /// What the fake service's token endpoint grants for a request's `scope`: by default those
    /// scopes, as an opaque access token `at-1`; `jwtScp`: a JWT access token for Graph whose
    /// `scp` lists these names (the service grants every scope consented before).
    struct Grants: Sendable {
        var jwtScp: [String]? = nil
    }

    init(approval: ForwardApproval? = nil, forwardScopes: [String]? = ["User.Read"], grants: Grants = Grants()) throws {
        directory = "/tmp/as-fwd-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        mainPath = directory + "/agent.sock"
        forwardPath = directory + "/forward.sock"
        let browser = Mutex<ScriptedBrowser?>(nil)
        let fakes = InProcessServer.Fakes(
            transport: FakeHTTPTransport { request in
                if let answer = Tokens.discoveryAnswer(for: request) { return answer }
                if request.url.contains("graph.microsoft.com") {
                    return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(#"{"displayName":"A"}"#.utf8))
                }
                let nonce = browser.withLock { browser in browser.map { $0.parameters(ofOpened: $0.openedURLs.count - 1)["nonce"] } } ?? nil
                let form = (try? FormURLEncoding.decode(Substring(String(decoding: request.body ?? [], as: UTF8.self)))) ?? [:]
                let scope = form["scope"] ?? "User.Read openid profile offline_access"
                if request.url.hasSuffix("/devicecode") {
                    return HTTPResponse(
                        status: 200,
                        body: Array(
                            #"{"device_code":"dc","user_code":"UC-LAPTOP","verification_uri":"https://microsoft.com/devicelogin","expires_in":600,"interval":1,"message":"enter UC-LAPTOP"}"#
                                .utf8))
                }
                let names = scope.split(separator: " ").filter { !["openid", "profile", "offline_access"].contains($0) }.sorted()
                let accessToken =
                    grants.jwtScp.map { Tokens.jwt(#"{"aud":"https://graph.microsoft.com","scp":"\#($0.joined(separator: " "))"}"#) }
                    ?? "at-1-" + names.joined(separator: "_")
                return Tokens.tokenResponse(
                    accessToken: accessToken, refreshToken: ForwardSocketTests.refreshToken, scope: scope, nonce: nonce,
                    audience: InProcessServer.clientId)
            })
        browser.withLock { $0 = fakes.browser }
        self.fakes = fakes
        var startup = try ConfigurationOverrides(params: [
            "clientId": .string(InProcessServer.clientId), "authority": "https://login.microsoftonline.com/common",
            "cache": ["persistence": "memory"], "scopes": ["User.Read"],
        ])
        startup.forwardScopes = forwardScopes
        startup.forwardApproval = approval
        var options = AgentServer.Options(socketPath: mainPath)
        options.forwardSocketPath = forwardPath
        options.startup = startup
        options.dependencies = fakes.dependencies
        let logs = LogCapture()
        self.logs = logs
        let server = AgentServer(options: options, logger: Logger(label: "agent-test") { _ in LogCapture.Handler(capture: logs) })
        self.server = server
        try POSIX.startThread { try? server.run() }
        for _ in 0..<500 where access(forwardPath, F_OK) != 0 { usleep(10_000) }
        guard access(forwardPath, F_OK) == 0 else { throw HarnessError("the agent did not start") }
    }

    var log: String { logs.text }

    func connect(_ path: String) throws -> LineClient { try LineClient(path: path) }

    func signInOnMainSocket() async throws {
        let laptop = try connect(mainPath)
        let reply = try await laptop.call("acquireToken", ["scopes": ["User.Read"]])
        guard reply["result"] != nil else { throw HarnessError("sign-in failed: \(reply)") }
    }

    func stop() {
        server.stop()
        for _ in 0..<500 where access(mainPath, F_OK) == 0 { usleep(10_000) }
        rmdir(directory)
    }
}

/// Everything logged, as text (to check what the agent's stderr would show); under a lock
/// ThreadSanitizer sees (the sessions log from their own threads).
final class LogCapture: Sendable {
    private let lines = PthreadMutex<[String]>([])
    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    struct Handler: LogHandler {
        let capture: LogCapture
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let details = (event.metadata ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
            capture.lines.withLock { $0.append("\(event.message) \(details)") }
        }
    }
}

/// A raw NDJSON client on a Unix socket that keeps every byte it receives (one call at a time,
/// each on a thread of its own, under a lock ThreadSanitizer sees).
final class LineClient: Sendable {
    private struct State {
        var buffer: [UInt8] = []
        var received: [UInt8] = []
        var nextID = 1
    }

    private let fd: Int32
    private let state = PthreadMutex(State())

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw HarnessError("cannot connect to \(path): errno \(errno)") }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Every byte received so far, as text.
    var received: String { state.withLock { String(decoding: $0.received, as: UTF8.self) } }

    /// Sends a request and returns its reply (skipping notifications).
    func call(_ method: String, _ params: JSONValue = [:]) async throws -> JSONValue {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
            do {
                try POSIX.startThread { [self] in
                    do { continuation.resume(returning: try state.withLock { try callNow(method, params, &$0) }) } catch {
                        continuation.resume(throwing: error)
                    }
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    private func callNow(_ method: String, _ params: JSONValue, _ state: inout State) throws -> JSONValue {
        let id = state.nextID
        state.nextID += 1
        let request: JSONValue = ["jsonrpc": "2.0", "id": .int(Int64(id)), "method": .string(method), "params": params]
        guard POSIX.writeAll(fd, request.serialized() + [UInt8(ascii: "\n")], to: .socketWithoutSignal) else {
            throw HarnessError("write failed")
        }
        while true {
            let message = try JSONValue.parse(try line(&state))
            if message["id"] == .int(Int64(id)) || (message["id"] == .null && message["error"] != nil) { return message }
        }
    }

    private func line(_ state: inout State) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let end = state.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(state.buffer[..<end])
                state.buffer.removeSubrange(...end)
                return line
            }
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { throw HarnessError("the connection ended (errno \(errno))") }
            state.buffer += chunk[..<count]
            state.received += chunk[..<count]
        }
    }
}
