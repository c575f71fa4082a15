import JSON
import JSONRPC
import Logging
import Sidecar
import Testing

@testable import SidecarCLI

/// The engine in this process called directly: each route kind answered as the socket would,
/// requests sent before their replies are read, a reply waited for with a time limit, and a
/// closed client refusing more.
@Suite struct LocalEngineClientTests {
    private func client(initialized: Bool = true) throws -> LocalEngineClient {
        var options = SidecarService.Options()
        options.diagnostics = true
        let engine = LocalEngineClient(service: try SidecarService(options: options, logger: Logger(label: "test")))
        if initialized {
            let hello = try engine.sendRequest(
                "initialize", params: ["clientId": "00001111-aaaa-2222-bbbb-3333cccc4444", "cache": ["persistence": "memory"]])
            #expect(try engine.reply(to: hello, timeoutSeconds: 5).get()["serverInfo"] != nil)
        }
        return engine
    }

    @Test func answersEachRouteKind() throws {
        let engine = try client()
        let ping = try engine.sendRequest("ping", params: [:])
        #expect(try engine.reply(to: ping, timeoutSeconds: 5) == .success([:]))
        let echo = try engine.sendRequest("diagnostics/echo", params: ["a": 1])
        let slept = try engine.sendRequest("diagnostics/sleep", params: ["ms": 50])
        #expect(try engine.reply(to: slept, timeoutSeconds: 10) == .success(["sleptMs": 50]))
        #expect(try engine.reply(to: echo, timeoutSeconds: 5) == .success(["a": 1]), "an earlier reply kept for its caller")
        guard case .failure(let missing) = try engine.reply(to: try engine.sendRequest("noSuchMethod", params: [:]), timeoutSeconds: 5)
        else {
            Issue.record("an unknown method answered")
            return
        }
        #expect(missing.code == -32601)
        guard case .failure(let invalid) = try engine.reply(to: try engine.sendRequest("diagnostics/sleep", params: ["ms": -1]), timeoutSeconds: 5)
        else {
            Issue.record("a bad param answered")
            return
        }
        #expect(invalid.code == -32602)
    }

    @Test func beforeInitializeTheEngineSaysSo() throws {
        let engine = try client(initialized: false)
        guard case .failure(let early) = try engine.reply(to: try engine.sendRequest("getAccounts", params: [:]), timeoutSeconds: 5) else {
            Issue.record("getAccounts answered before initialize")
            return
        }
        #expect(early.code == -32002)
    }

    @Test func aReplyNotInTimeIsATimeOutAndAClosedClientRefuses() throws {
        let engine = try client()
        let slow = try engine.sendRequest("diagnostics/sleep", params: ["ms": 2_000])
        #expect(throws: JSONRPCClient.Failure.timedOut) { try engine.reply(to: slow, timeoutSeconds: 0.05) }
        engine.close()
        #expect(throws: JSONRPCClient.Failure.closed(errno: nil)) { try engine.sendRequest("ping", params: [:]) }
    }
}
