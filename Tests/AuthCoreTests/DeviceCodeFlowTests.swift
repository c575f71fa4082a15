import AuthSeams
import AuthTestSupport
import Logging
import Synchronization
import Testing
import TokenCache

@testable import AuthCore

/// Device-code polling against a scripted token endpoint; the clock's waits return at once.
@Suite struct DeviceCodeFlowTests {
    let clock = ManualClock()

    /// One scripted answer to a poll of the token endpoint.
    enum Poll: Sendable {
        case pending, slowDown, tokens
        case status(Int, retryAfter: Int?)
        case reset, timedOut, declined
    }

    /// Runs the flow with the device code answer (`expiresIn`, `interval`) and `polls` in order
    /// (the last one repeats); returns the outcome and the transport.
    private func run(
        expiresIn: Int = 900, interval: Int = 5, _ polls: [Poll],
        onUserCode: @escaping @Sendable (DeviceCodeInfo) -> Void = { _ in }
    ) async
        -> (Result<TokenResult, any Error>, FakeHTTPTransport)
    {
        let count = Mutex(0)
        let http = FakeHTTPTransport { request throws(HTTPError) in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            if request.url.hasSuffix("/devicecode") {
                return Self.json(
                    200,
                    #"{"device_code":"dc","user_code":"UC","verification_uri":"https://microsoft.com/devicelogin","expires_in":\#(expiresIn),"interval":\#(interval)}"#
                )
            }
            let n = count.withLock {
                $0 += 1
                return $0
            }
            return try Self.answer(polls[min(n, polls.count) - 1])
        }
        let dependencies = AuthDependencies(
            transport: http, cache: TokenCache(store: MemoryTokenCacheStore()), clock: clock,
            browser: UnusedBrowser(), listener: UnusedListener(), logger: Logger(label: "test"))
        let result: Result<TokenResult, any Error>
        do {
            let configuration = ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common"))
            let app = PublicClientApplication(configuration: configuration, dependencies: dependencies)
            result = .success(try await app.acquireTokenByDeviceCode(DeviceCodeRequest(onUserCode: onUserCode), correlationId: "c"))
        } catch {
            result = .failure(error)
        }
        return (result, http)
    }

    private static func json(_ status: Int, _ body: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(body.utf8))
    }

    private static func answer(_ poll: Poll) throws(HTTPError) -> HTTPResponse {
        switch poll {
        case .pending: return json(400, #"{"error":"authorization_pending"}"#)
        case .slowDown: return json(400, #"{"error":"slow_down"}"#)
        case .declined: return json(400, #"{"error":"authorization_declined"}"#)
        case .tokens: return Tokens.tokenResponse(accessToken: "at-device")
        case .status(let status, let retryAfter):
            return json(status, #"{"error":"temporarily_unavailable"}"#, headers: retryAfter.map { [("Retry-After", "\($0)")] } ?? [])
        case .reset: throw .network("Connection reset by peer")
        case .timedOut: throw .timedOut
        }
    }

    private func polls(_ http: FakeHTTPTransport) -> Int { http.requests(to: "/token").count }

    @Test func retriesTransientFailuresThenSignsIn() async throws {
        let (result, http) = await run([
            .pending, .status(429, retryAfter: 7), .reset, .timedOut,
            .status(502, retryAfter: nil), .status(503, retryAfter: nil), .pending, .tokens,
        ])
        #expect(try result.get().accessToken == "at-device")
        // Polling has its own retry loop: one request per poll, nothing retried inside it.
        #expect(polls(http) == 8)
    }

    @Test func honoursRetryAfterAndBacksOff() async throws {
        let (result, _) = await run(interval: 5, [.status(429, retryAfter: 30), .reset, .reset, .reset, .pending, .tokens])
        #expect(throws: Never.self) { try result.get() }
        // interval, then Retry-After 30 (more than the first backoff, 5), then 10, 20, 40
        // (doubling), and back to the interval once the service answers.
        #expect(clock.sleeps == [5, 30, 10, 20, 40, 5].map { Duration.seconds($0) })
    }

    @Test func givesUpAfterTooManyTransientFailuresInARow() async throws {
        let (result, http) = await run(expiresIn: 86_400, [.reset])
        #expect(throws: AuthError.self) { try result.get() }
        #expect((result.failureError as? AuthError)?.kind == .networkError)
        #expect(polls(http) == TransientRetry.Budget.polling.maxConsecutiveFailures + 1)
    }

    @Test func givesUpWhenTheWaitWouldOutliveTheCode() async throws {
        let (result, http) = await run(expiresIn: 60, [.pending, .status(429, retryAfter: 3600)])
        #expect((result.failureError as? AuthError)?.httpStatus == 429)
        #expect(polls(http) == 2)
    }

    @Test func doesNotRetryWhatIsNotTransient() async throws {
        let (declined, _) = await run([.reset, .declined])
        #expect((declined.failureError as? AuthError)?.kind == .userCanceled)
        let (badRequest, http) = await run([.status(400, retryAfter: nil)])
        #expect((badRequest.failureError as? AuthError)?.httpStatus == 400)
        #expect(polls(http) == 1)
    }

    @Test func keepsTheExistingPollingRules() async throws {
        let (result, _) = await run(interval: 2, [.pending, .slowDown, .tokens])
        #expect(throws: Never.self) { try result.get() }
        #expect(clock.sleeps == [2, 2, 7].map { Duration.seconds($0) })
        let (expired, _) = await run(expiresIn: 10, interval: 5, [.pending])
        #expect((expired.failureError as? AuthError)?.kind == .timeout)
    }

    @Test func cancellationEndsTheWait() async throws {
        // Cancelled while the user is typing the code: the next wait ends the flow. (Its own
        // task: the callback cancels the task it runs in.)
        let (result, http) = await Task { await run([.reset]) { _ in withUnsafeCurrentTask { $0?.cancel() } } }.value
        #expect(result.failureError is CancellationError)
        #expect(polls(http) == 0)
    }
}

extension Result {
    var failureError: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
