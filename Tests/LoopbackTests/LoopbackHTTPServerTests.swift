import Logging
import POSIXSupport
import Testing

@testable import Loopback

#if canImport(Glibc)
    import Glibc
#endif

/// A handler that echoes the path and words refusals as `refused: message`.
private struct EchoHandler: LoopbackHTTPHandler {
    func reply(to request: HTTPServerRequest) -> HTTPReply {
        .init(status: .ok, body: "path \(request.path)", contentType: "text/plain")
    }

    func reply(refusing refusal: HTTPRefusal) -> HTTPReply {
        .init(status: refusal.status, body: "refused: \(refusal.message)", contentType: "text/plain")
    }
}

/// The one loopback server over real sockets: its limits, deadline and policy.
@Suite struct LoopbackHTTPServerTests {
    /// A server on a free port, running on its own thread; the caller stops it.
    private func startServer(
        limits: ServerLimits = LoopbackHTTPServer.defaultLimits, policy: RequestPolicy = .programsOnly
    ) throws -> LoopbackHTTPServer {
        let server = try LoopbackHTTPServer(
            port: 0, policy: policy, limits: limits, handler: EchoHandler(), logger: Logger(label: "test"))
        try POSIX.startThread { server.run() }
        return server
    }

    @Test func servesARequestThroughItsHandler() async throws {
        do {
            let server = try startServer()
            defer { server.stop() }
            let response = try await TestHTTPClient.send(port: server.port, target: "/hello?x=1", host: "127.0.0.1:\(server.port)")
            #expect(response.status == 200 && response.body == "path /hello")
            #expect(try await TestHTTPClient.send(port: server.port, target: "/a").status == 200)  // localhost:PORT
        }
    }

    @Test func refusesAnotherHostAndWebPages() async throws {
        do {
            let server = try startServer()
            defer { server.stop() }
            let port = server.port
            #expect(try await TestHTTPClient.send(port: port, target: "/", host: "evil.example:\(port)").status == 421)
            #expect(try await TestHTTPClient.send(port: port, target: "/", host: "127.0.0.1:\(port &+ 1)").status == 421)
            #expect(try await TestHTTPClient.send(port: port, target: "/", headers: ["Origin: https://evil.example"]).status == 403)
            #expect(try await TestHTTPClient.send(port: port, target: "/", headers: ["Sec-Fetch-Site: cross-site"]).status == 403)
            #expect(try await TestHTTPClient.send(port: port, target: "/", headers: ["Sec-Fetch-Site: none"]).status == 200)
            let twoHosts = "GET / HTTP/1.1\r\nHost: localhost:\(port)\r\nHost: evil.example\r\n\r\n"
            #expect(try await TestHTTPClient.raw(port: port, twoHosts).hasPrefix("HTTP/1.1 400 "))
        }
        do {
            let server = try startServer(policy: RequestPolicy(refusesBrowserRequests: false))
            defer { server.stop() }
            #expect(try await TestHTTPClient.send(port: server.port, target: "/", headers: ["Origin: https://x"]).status == 200)
        }
    }

    @Test func cutsOffARequestThatTricklesPastTheDeadline() async throws {
        let limits = ServerLimits(maxConnections: 4, atCapacity: .refuseNew, requestDeadline: .milliseconds(400))
        do {
            let server = try startServer(limits: limits)
            defer { server.stop() }
            let fd = try #require(TestSockets.idleConnections(port: server.port, count: 1).first)
            defer { close(fd) }
            let started = ContinuousClock.now
            var answer: [UInt8] = []
            // One byte every 50 ms: each read alone is quick, the whole request never ends, so
            // only a deadline for the whole request answers it (the loop's bound is for a
            // server without one; under load the answer may come late, never not at all).
            while ContinuousClock.now - started < .seconds(30) {
                _ = send(fd, "X", 1, Int32(MSG_NOSIGNAL))
                try await Task.sleep(for: .milliseconds(50))
                if let count = LoopbackSockets.readAvailable(fd, into: &answer), count > 0 { break }
            }
            #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 408 "))
        }
    }

    @Test func evictsTheOldestSilentConnectionForANewOne() async throws {
        let limits = ServerLimits(maxConnections: 3, atCapacity: .evictOldestWaiting, requestDeadline: .seconds(30))
        do {
            let server = try startServer(limits: limits)
            defer { server.stop() }
            let silent = TestSockets.idleConnections(port: server.port, count: 10)
            defer { for fd in silent { close(fd) } }
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await TestHTTPClient.send(port: server.port, target: "/real").status == 200)
            #expect(TestSockets.closedByPeer(silent) >= 8)  // 10 silent + 1 real through 3 slots
            #expect(server.connectionCount <= 3)
        }
    }

    @Test func refusesANewConnectionAtTheCapWhenNothingMayBeEvicted() async throws {
        let limits = ServerLimits(maxConnections: 2, atCapacity: .refuseNew, requestDeadline: .seconds(30))
        do {
            let server = try startServer(limits: limits)
            defer { server.stop() }
            let held = TestSockets.idleConnections(port: server.port, count: 2)
            defer { for fd in held { close(fd) } }
            try await Task.sleep(for: .milliseconds(200))
            let refused = try await TestHTTPClient.raw(port: server.port, "GET / HTTP/1.1\r\nHost: localhost:\(server.port)\r\n\r\n")
            #expect(refused.hasPrefix("HTTP/1.1 503 ") && refused.contains("too many connections"))
        }
    }

    @Test func answersMalformedRequests() async throws {
        do {
            let server = try startServer()
            defer { server.stop() }
            #expect(try await TestHTTPClient.raw(port: server.port, "garbage\r\n\r\n").hasPrefix("HTTP/1.1 400 "))
            let chunked = "POST / HTTP/1.1\r\nHost: localhost:\(server.port)\r\nTransfer-Encoding: chunked\r\n\r\n"
            #expect(try await TestHTTPClient.raw(port: server.port, chunked).hasPrefix("HTTP/1.1 501 "))
            let absolute = "GET http://localhost/ HTTP/1.1\r\nHost: localhost:\(server.port)\r\n\r\n"
            #expect(try await TestHTTPClient.raw(port: server.port, absolute).hasPrefix("HTTP/1.1 400 "))
        }
    }
}
