import Composition
import JSON
import JSONRPC
import Logging
import POSIXSupport
import Sidecar
import Testing

@testable import SidecarCLI

/// The engine in this process called directly: each route kind answered as the socket would,
/// requests sent before their replies are read, a reply waited for with a time limit, and a
/// closed client refusing more. Each exchange runs on a thread of its own, as a verb runs on
/// its main thread: a reply is waited for by blocking, which a test's cooperative thread must
/// not do (the engine's tasks need those threads).
@Suite struct LocalEngineClientTests {
    private static func client(initialized: Bool = true) throws -> LocalEngineClient {
        var options = SidecarService.Options(policy: OpenSessionPolicy(), dependencies: ApplicationFactory.live)
        options.diagnostics = true
        let engine = LocalEngineClient(service: try SidecarService(options: options, logger: Logger(label: "test")))
        if initialized {
            let hello = try engine.sendRequest(
                "initialize", params: ["clientId": "00001111-aaaa-2222-bbbb-3333cccc4444", "cache": ["persistence": "memory"]])
            _ = try engine.reply(to: hello, timeoutSeconds: 30).get()
        }
        return engine
    }

    /// `body`'s outcomes, computed on a thread of its own.
    private static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            do {
                try POSIX.startThread {
                    do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    @Test func answersEachRouteKind() async throws {
        let outcomes = try await Self.onOwnThread { () throws -> [Result<JSONValue, RPCError>] in
            let engine = try Self.client()
            let ping = try engine.sendRequest("ping", params: [:])
            let echo = try engine.sendRequest("diagnostics/echo", params: ["a": 1])
            let slept = try engine.sendRequest("diagnostics/sleep", params: ["ms": 50])
            return [
                try engine.reply(to: ping, timeoutSeconds: 30),
                try engine.reply(to: slept, timeoutSeconds: 30),
                try engine.reply(to: echo, timeoutSeconds: 30),  // an earlier reply kept for its caller
                try engine.reply(to: try engine.sendRequest("noSuchMethod", params: [:]), timeoutSeconds: 30),
                try engine.reply(to: try engine.sendRequest("diagnostics/sleep", params: ["ms": -1]), timeoutSeconds: 30),
            ]
        }
        #expect(outcomes[0] == .success([:]) && outcomes[1] == .success(["sleptMs": 50]) && outcomes[2] == .success(["a": 1]))
        #expect(outcomes[3].errorCode == -32601 && outcomes[4].errorCode == -32602)
    }

    @Test func beforeInitializeTheEngineSaysSo() async throws {
        let early = try await Self.onOwnThread {
            let engine = try Self.client(initialized: false)
            return try engine.reply(to: try engine.sendRequest("getAccounts", params: [:]), timeoutSeconds: 30)
        }
        #expect(early.errorCode == -32002)
    }

    @Test func aReplyNotInTimeIsATimeOutAndAClosedClientRefuses() async throws {
        let (late, closed) = try await Self.onOwnThread { () throws -> (JSONRPCClient.Failure?, JSONRPCClient.Failure?) in
            let engine = try Self.client()
            let slow = try engine.sendRequest("diagnostics/sleep", params: ["ms": 2_000])
            var late: JSONRPCClient.Failure?
            do throws(JSONRPCClient.Failure) { _ = try engine.reply(to: slow, timeoutSeconds: 0.05) } catch { late = error }
            engine.close()
            var closed: JSONRPCClient.Failure?
            do throws(JSONRPCClient.Failure) { _ = try engine.sendRequest("ping", params: [:]) } catch { closed = error }
            return (late, closed)
        }
        #expect(late == .timedOut && closed == .closed(errno: nil))
    }
}

extension Result where Failure == RPCError {
    /// The error's code; `nil` for a result.
    fileprivate var errorCode: Int? {
        guard case .failure(let error) = self else { return nil }
        return error.code
    }
}
