import AuthSeams
import Testing

@testable import Loopback

#if canImport(Glibc)
    import Glibc
#endif

@Suite("LoopbackRedirectListener over real sockets")
struct LoopbackListenerTests {
    let listener = LoopbackRedirectListener()

    /// Starts waiting in a child task; returns the task.
    func waiting(
        _ pending: LoopbackPendingRedirect, state: String = "S1",
        timeout: Duration = .seconds(30)
    ) -> Task<AuthorizationResponse, any Error> {
        Task { try await pending.response(expectedState: state, timeout: timeout) }
    }

    @Test("an ephemeral port is chosen and reported; bound to 127.0.0.1 only")
    func ephemeralPortOnLoopbackOnly() async throws {
        let pending = try listener.startListening(redirectURI: "http://localhost")
        #expect(pending.port > 0)
        #expect(pending.redirectURI == "http://localhost:\(pending.port)")
        // 0100007F is 127.0.0.1 in /proc/net/tcp; nothing on 0.0.0.0 or ::.
        let sockets = TestSockets.listeningSockets(port: pending.port)
        #expect(sockets.map(\.address) == ["0100007F:" + hex(pending.port)])
        let reply = try await TestHTTPClient.send(port: pending.port, target: "/favicon.ico")
        #expect(reply.status == 404)
        await pending.close()
        // Our socket (by inode) is gone; a parallel test may already have the port again.
        #expect(await TestSockets.gone(Set(sockets.map(\.inode)), port: pending.port))
    }

    @Test("a configured port and path are kept")
    func fixedPortAndPath() async throws {
        let port = TestSockets.freePort()
        let pending = try listener.startListening(redirectURI: "http://127.0.0.1:\(port)/auth/cb")
        #expect(pending.port == port && pending.redirectURI == "http://127.0.0.1:\(port)/auth/cb")
        let task = waiting(pending)
        #expect(try await TestHTTPClient.send(port: port, target: "/?code=c&state=S1").status == 404)
        #expect(try await TestHTTPClient.send(port: port, target: "/auth/cb/x?code=c&state=S1").status == 404)
        let ok = try await TestHTTPClient.send(
            port: port, target: "/auth/cb?code=c&state=S1",
            host: "127.0.0.1:\(port)")
        #expect(ok.status == 200 && ok.body.contains("Sign-in complete"))
        #expect(try await task.value.code == "c")
    }

    @Test("a port in use is reported as bindFailed")
    func portInUse() throws {
        let pending = try listener.startListening(redirectURI: "http://localhost")
        #expect(throws: LoopbackError.self) {
            try listener.startListening(redirectURI: "http://localhost:\(pending.port)")
        }
    }

    @Test("wrong or missing state is answered 400 and ignored; the right one is accepted")
    func stateMismatchIgnored() async throws {
        let pending = try listener.startListening(redirectURI: "http://localhost")
        let ours = inodes(pending)
        let task = waiting(pending)
        let wrong = try await TestHTTPClient.send(port: pending.port, target: "/?code=evil&state=S2")
        #expect(wrong.status == 400 && wrong.body.contains("ignored"))
        let missing = try await TestHTTPClient.send(port: pending.port, target: "/?code=evil")
        #expect(missing.status == 400)
        let repeated = try await TestHTTPClient.send(port: pending.port, target: "/?code=evil&state=S1&state=S1")
        #expect(repeated.status == 400)
        let ok = try await TestHTTPClient.send(
            port: pending.port, target: "/?code=good%2Bcode&state=S1&session_state=x&client_info=eyJ1aWQiOiIxIn0")
        #expect(ok.status == 200)
        #expect(ok.head.contains("Cache-Control: no-store") && ok.head.contains("Connection: close"))
        let response = try await task.value
        #expect(response.code == "good+code" && response.state == "S1" && response.error == nil)
        #expect(response.clientInfo == "eyJ1aWQiOiIxIn0" && response.parameters["session_state"] == "x")
        await expectPortFreed(pending.port, inodes: ours)
    }

    @Test("an error response is returned with its description and subcode; the page escapes it")
    func errorResponse() async throws {
        let pending = try listener.startListening(redirectURI: "http://localhost")
        let task = waiting(pending)
        let reply = try await TestHTTPClient.send(
            port: pending.port,
            target: "/?error=access_denied&error_description=AADSTS65004%3A+%3Cscript%3Ealert(1)%3C%2Fscript%3E&error_subcode=cancel&state=S1")
        #expect(reply.status == 200)
        #expect(reply.body.contains("Sign-in failed") && reply.body.contains("access_denied"))
        #expect(reply.body.contains("&lt;script&gt;") && !reply.body.contains("<script>"))
        let response = try await task.value
        #expect(response.error == "access_denied" && response.errorSubcode == "cancel")
        #expect(response.errorDescription == "AADSTS65004: <script>alert(1)</script>" && response.code == nil)
    }

    @Test("response_mode=form_post: POST with a form body")
    func formPost() async throws {
        let pending = try listener.startListening(redirectURI: "http://localhost/")
        let task = waiting(pending)
        let json = try await TestHTTPClient.send(
            port: pending.port, method: "POST", target: "/",
            headers: ["Content-Type: application/json"], body: "{}")
        #expect(json.status == 415)
        let put = try await TestHTTPClient.send(port: pending.port, method: "PUT", target: "/", body: "x")
        #expect(put.status == 405 && put.head.contains("Allow: GET, POST"))
        let reply = try await TestHTTPClient.send(
            port: pending.port, method: "POST", target: "/",
            headers: ["Content-Type: application/x-www-form-urlencoded; charset=utf-8"],
            body: "code=form+code&state=S1&id_token=abc")
        #expect(reply.status == 200)
        let response = try await task.value
        #expect(response.code == "form code" && response.parameters["id_token"] == "abc")
    }

    @Test("a Host header naming another site (DNS rebinding) is refused")
    func foreignHost() async throws {
        let pending = try listener.startListening(redirectURI: "http://localhost")
        let task = waiting(pending)
        let reply = try await TestHTTPClient.send(
            port: pending.port, target: "/?code=c&state=S1",
            host: "evil.example:\(pending.port)")
        #expect(reply.status == 421)
        #expect(try await TestHTTPClient.send(port: pending.port, target: "/?code=c&state=S1").status == 200)
        #expect(try await task.value.code == "c")
    }

    @Test("a redirect arriving before response(expectedState:) is held, then decided")
    func earlyRedirect() async throws {
        let pending = try listener.startListening(redirectURI: "http://localhost")
        let early = Task { try await TestHTTPClient.send(port: pending.port, target: "/?code=early&state=S1") }
        try await Task.sleep(for: .milliseconds(200))
        let response = try await pending.response(expectedState: "S1", timeout: .seconds(5))
        #expect(response.code == "early")
        #expect(try await early.value.status == 200)
    }

    @Test("malformed and oversized requests are answered, the listener keeps waiting")
    func malformedRequests() async throws {
        let pending = try listener.startListening(redirectURI: "http://localhost")
        let task = waiting(pending)
        let garbage = try await TestHTTPClient.raw(port: pending.port, "HELLO\r\n\r\n")
        #expect(garbage.hasPrefix("HTTP/1.1 400"))
        let big = try await TestHTTPClient.raw(port: pending.port, "POST / HTTP/1.1\r\nContent-Length: 999999\r\n\r\n")
        #expect(big.hasPrefix("HTTP/1.1 413"))
        #expect(try await TestHTTPClient.send(port: pending.port, target: "/?state=S1&code=x").status == 200)
        #expect(try await task.value.code == "x")
    }

    @Test("100 idle connections (slow-loris) neither delay the real redirect nor hold more than the cap")
    func idleConnectionsDoNotStarveTheRedirect() async throws {
        func redirectDuration(idle: Int) async throws -> (Duration, closedIdle: Int) {
            let pending = try listener.startListening(redirectURI: "http://localhost")
            let task = waiting(pending)
            let sockets = TestSockets.idleConnections(port: pending.port, count: idle)
            defer { for socket in sockets { close(socket) } }
            // Give the listener time to see them all (the evicted ones are closed).
            var closedIdle = 0
            for _ in 0..<30 where closedIdle < idle - LoopbackRedirectListener.limits.maxConnections {
                try await Task.sleep(for: .milliseconds(100))
                closedIdle = TestSockets.closedByPeer(sockets)
            }
            let start = ContinuousClock.now
            let reply = try await TestHTTPClient.raw(
                port: pending.port, "GET /?code=real&state=S1 HTTP/1.1\r\nHost: localhost:\(pending.port)\r\n\r\n",
                timeout: .seconds(30))
            let elapsed = ContinuousClock.now - start
            #expect(reply.hasPrefix("HTTP/1.1 200"))
            #expect(try await task.value.code == "real")
            return (elapsed, closedIdle)
        }
        let (alone, _) = try await redirectDuration(idle: 0)
        let (crowded, closedIdle) = try await redirectDuration(idle: 100)
        // Before: the 32 slots held idle sockets until their 10 s read deadline. Far apart
        // figures only (a loaded CI machine is slow, but not 5 s slow on loopback).
        #expect(crowded < alone + .seconds(5), "alone \(alone), with 100 idle connections \(crowded)")
        // The cap: all but the 32 newest idle sockets were closed to make room.
        #expect(closedIdle >= 100 - LoopbackRedirectListener.limits.maxConnections)
    }

    @Test("timeout: LoopbackError.timedOut, port freed")
    func timeout() async throws {
        let pending = try listener.startListening(redirectURI: "http://localhost")
        let ours = inodes(pending)
        await #expect(throws: LoopbackError.timedOut) {
            try await pending.response(expectedState: "S1", timeout: .milliseconds(300))
        }
        await expectPortFreed(pending.port, inodes: ours)
    }

    @Test("cancellation: CancellationError promptly, socket closed, the same port binds again")
    func cancellation() async throws {
        let port = TestSockets.freePort()
        let pending = try listener.startListening(redirectURI: "http://localhost:\(port)")
        let task = waiting(pending, timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(100))
        let start = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ContinuousClock.now - start < .seconds(30))  // well before the 60 s wait would end
        #expect(TestSockets.canBind(port: port))
        // A fixed port can serve a second sign-in right away.
        let again = try listener.startListening(redirectURI: "http://localhost:\(port)")
        await again.close()
    }

    @Test("close() ends a pending wait with .closed; a second wait is refused")
    func closeWhileWaiting() async throws {
        let pending = try listener.startListening(redirectURI: "http://localhost")
        let task = waiting(pending)
        try await Task.sleep(for: .milliseconds(100))
        await #expect(throws: LoopbackError.closed) {
            try await pending.response(expectedState: "S1", timeout: .seconds(1))
        }
        await pending.close()
        await #expect(throws: LoopbackError.closed) { try await task.value }
        await #expect(throws: LoopbackError.emptyExpectedState) {
            try await pending.response(expectedState: "", timeout: .seconds(1))
        }
        await pending.close()  // idempotent
    }

    @Test("dropping the pending redirect without close() frees the port")
    func droppedWithoutClose() async throws {
        var port: UInt16 = 0
        var ours: Set<String> = []
        do {
            let pending = try listener.startListening(redirectURI: "http://localhost")
            (port, ours) = (pending.port, inodes(pending))
        }
        // No handshake here (deinit cannot await): give the thread a moment.
        for _ in 0..<50 where TestSockets.listeningSockets(port: port).contains(where: { ours.contains($0.inode) }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        await expectPortFreed(port, inodes: ours)
    }

    /// Our listening socket (identified by inode, as a parallel test may get the same
    /// port next) is gone, and when the port is unused it can be bound again at once.
    private func expectPortFreed(_ port: UInt16, inodes: Set<String>) async {
        #expect(!inodes.isEmpty)
        #expect(await TestSockets.gone(inodes, port: port))
        guard TestSockets.listeningSockets(port: port).isEmpty else { return }
        // Connections the server closed linger in TIME_WAIT, so bind as the listener does
        // (SO_REUSEADDR): a new sign-in on the same port must work at once.
        let rebound = try? LoopbackSockets.listenOnLoopback(port: port)
        #expect(rebound != nil)
        if let rebound { close(rebound.fd) }
    }

    private func inodes(_ pending: LoopbackPendingRedirect) -> Set<String> {
        Set(TestSockets.listeningSockets(port: pending.port).map(\.inode))
    }

    private func hex(_ port: UInt16) -> String {
        let digits = String(port, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
