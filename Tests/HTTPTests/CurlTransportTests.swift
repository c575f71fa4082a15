import AuthSeams
import Foundation
import Logging
import Testing

@testable import HTTP

/// libcurl (loaded with dlopen) against the mock identity platform over real TLS sockets.
@Suite(.serialized) struct CurlTransportTests {
    let mock: MockIdentityPlatform
    let transport: CurlTransport

    init() throws {
        mock = try MockIdentityPlatform()
        transport = CurlTransport(caFile: mock.caFile, logger: Logger(label: "test"))
    }

    @Test func getsJSONOverVerifiedTLS() async throws {
        let response = try await transport.send(HTTPRequest(url: "\(mock.url)/common/v2.0/.well-known/openid-configuration"))
        #expect(response.status == 200)
        #expect(response.header("Content-Type")?.contains("json") == true)
        #expect(response.bodyText.contains("token_endpoint"))
    }

    @Test func postsFormsAndReturnsErrorStatusesAsResponses() async throws {
        let request = HTTPRequest.form(
            url: "\(mock.url)/common/oauth2/v2.0/token",
            fields: [("grant_type", "refresh_token"), ("refresh_token", "bogus value&="), ("client_id", "x")])
        let response = try await transport.send(request)
        #expect(response.status == 400)
        #expect(response.bodyText.contains("AADSTS"))
    }

    @Test func refusesAnUntrustedCertificate() async {
        let untrusting = CurlTransport(caFile: "/etc/ssl/certs/ca-certificates.crt", logger: Logger(label: "test"))
        let error = await failure { () async throws(HTTPError) in
            try await untrusting.send(HTTPRequest(url: "\(mock.url)/common/v2.0/.well-known/openid-configuration"))
        }
        guard let error, case .tls = error else {
            Issue.record("expected a TLS error, got \(String(describing: error))")
            return
        }
    }

    @Test func aBodyOverTheLimitEndsTheTransfer() async throws {
        let url = "\(mock.url)/common/v2.0/.well-known/openid-configuration"
        let size = try await transport.send(HTTPRequest(url: url)).body.count
        #expect(try await transport.send(HTTPRequest(url: url, maxResponseBytes: size)).body.count == size)
        await #expect(throws: HTTPError.responseTooLarge(limit: size - 1)) {
            _ = try await transport.send(HTTPRequest(url: url, maxResponseBytes: size - 1))
        }
    }

    /// A body without Content-Length (chunked, or decompressed) is counted as it arrives.
    @Test func aStreamedBodyIsCutAtTheLimit() throws {
        let transfer = CurlTransfer(
            library: try CurlLibrary.shared(), request: HTTPRequest(url: mock.url, maxResponseBytes: 10), caFile: nil, userAgent: "test")
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var piece = Array("123456".utf8CString)
        #expect(CurlCallbacks.write(&piece, 1, 6, context) == 6)
        #expect(!transfer.tooLarge)
        #expect(CurlCallbacks.write(&piece, 1, 5, context) == 0)  // 11 bytes: abort
        #expect(transfer.tooLarge)
    }

    @Test func aHeaderBlockOverTheLimitEndsTheTransfer() async throws {
        let url = "\(mock.url)/common/v2.0/.well-known/openid-configuration"
        await #expect(throws: HTTPError.responseTooLarge(limit: 16)) {
            _ = try await transport.send(HTTPRequest(method: "HEAD", url: url, maxResponseBytes: 16))
        }
    }

    @Test func refusesPlainHTTPToANonLoopbackHost() async {
        await #expect(throws: HTTPError.insecureOrInvalidURL("refusing http://login.example.com: HTTPS is required except for loopback hosts")) {
            _ = try await transport.send(HTTPRequest(url: "http://login.example.com/common"))
        }
    }

    @Test func reportsAConnectionRefusedAsANetworkError() async {
        let error = await failure { () async throws(HTTPError) in
            try await transport.send(HTTPRequest(url: "http://127.0.0.1:9/", timeout: .seconds(5)))
        }
        guard let error, case .network = error else {
            Issue.record("expected a network error, got \(String(describing: error))")
            return
        }
    }

    private func failure(_ body: () async throws(HTTPError) -> HTTPResponse) async -> HTTPError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test func timesOut() async throws {
        try mock.admin("faults", ["type": "latency", "delay_ms": 3000, "endpoint": "*"])
        await #expect(throws: HTTPError.timedOut) {
            _ = try await transport.send(HTTPRequest(url: "\(mock.url)/common/v2.0/.well-known/openid-configuration", timeout: .milliseconds(500)))
        }
        try mock.admin("faults/clear")
    }

    @Test func aRequestWithoutATimeoutGetsTheTransportDefault() async throws {
        try mock.admin("faults", ["type": "latency", "delay_ms": 3000, "endpoint": "*"])
        let quick = CurlTransport(caFile: mock.caFile, defaultTimeout: .milliseconds(500), logger: Logger(label: "test"))
        let started = ContinuousClock.now
        await #expect(throws: HTTPError.timedOut) {
            _ = try await quick.send(HTTPRequest(url: "\(mock.url)/common/v2.0/.well-known/openid-configuration"))
        }
        #expect(ContinuousClock.now - started < .milliseconds(2500))  // not the 3 s answer
        try mock.admin("faults/clear")
    }

    @Test func cancellingTheTaskAbortsTheTransfer() async throws {
        try mock.admin("faults", ["type": "latency", "delay_ms": 30000, "endpoint": "*"])
        let started = ContinuousClock.now
        let task = Task { try await transport.send(HTTPRequest(url: "\(mock.url)/common/v2.0/.well-known/openid-configuration")) }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        await #expect(throws: HTTPError.cancelled) { _ = try await task.value }
        #expect(ContinuousClock.now - started < .seconds(20))  // well before the 30 s answer
        try mock.admin("faults/clear")
    }
}

@Suite struct FormEncodingTests {
    @Test func escapesReservedCharacters() {
        #expect(FormEncoding.escape("a b&c=d/é~") == "a%20b%26c%3Dd%2F%C3%A9~")
    }

    @Test func decodesWhatItEncodes() throws {
        let fields = [("code", "0.A+b/c=="), ("state", "s p")]
        let decoded = try FormURLEncoding.decode(Substring(FormEncoding.query(fields)))
        #expect(decoded.keys.sorted() == ["code", "state"])
        #expect([decoded["code"], decoded["state"]] == ["0.A+b/c==", "s p"])
    }
}
