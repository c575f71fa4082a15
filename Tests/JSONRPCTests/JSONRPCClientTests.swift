import JSON
import JSONRPC
import POSIXSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The client against a scripted peer on the other end of a socket pair (no process).
@Suite struct JSONRPCClientTests {
    /// A peer that reads one line at a time and answers with the lines `script` gives.
    final class ScriptedPeer: @unchecked Sendable {
        let fd: Int32
        private var buffer: [UInt8] = []
        init(fd: Int32) { self.fd = fd }

        func readLine() -> JSONValue? {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(buffer[..<newline])
                    buffer.removeSubrange(...newline)
                    return try? JSONValue.parse(line)
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { return nil }
                buffer += chunk[..<count]
            }
        }

        func send(_ text: String) {
            let bytes = Array((text + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
    }

    static func pair() throws -> (client: JSONRPCClient, peer: ScriptedPeer) {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        return (JSONRPCClient(fd: fds[0]), ScriptedPeer(fd: fds[1]))
    }

    @Test func handlesNotificationsAndServerRequestsWhileWaiting() throws {
        let (client, peer) = try Self.pair()
        var notes: [String] = []
        client.onNotification = { method, params in notes.append("\(method):\(params?["message"]?.stringValue ?? "")") }
        client.onRequest = { method, params in
            method == "openUrl" ? .success(["opened": .string(params?["url"]?.stringValue ?? "")]) : .failure(.methodNotFound(method))
        }
        let replyToServer = Mutexed<JSONValue?>(nil)
        Thread.run {
            guard let request = peer.readLine(), let id = request["id"] else { return }
            peer.send(#"{"jsonrpc":"2.0","method":"deviceCode","params":{"message":"enter ABC"}}"#)
            peer.send(#"{"jsonrpc":"2.0","id":"sidecar-1","method":"openUrl","params":{"url":"https://x/"}}"#)
            replyToServer.set(peer.readLine())
            peer.send(#"{"jsonrpc":"2.0","id":99,"result":{"other":true}}"#)
            peer.send(#"{"jsonrpc":"2.0","id":\#(id.jsonText),"result":{"done":true}}"#)
        }
        let outcome = try client.call("acquireToken", params: ["flow": "deviceCode"], timeoutSeconds: 10)
        #expect(try outcome.get() == ["done": true])
        #expect(notes == ["deviceCode:enter ABC"])
        #expect(replyToServer.get() == ["jsonrpc": "2.0", "id": "sidecar-1", "result": ["opened": "https://x/"]])
        client.close()
    }

    @Test func returnsTheServersErrorObject() throws {
        let (client, peer) = try Self.pair()
        Thread.run {
            guard let request = peer.readLine(), let id = request["id"] else { return }
            peer.send(#"{"jsonrpc":"2.0","id":\#(id.jsonText),"error":{"code":-50002,"message":"sign in","data":{"name":"interactionRequired"}}}"#)
        }
        let outcome = try client.call("acquireTokenSilent", timeoutSeconds: 10)
        #expect(throws: RPCError.self) { try outcome.get() }
        if case .failure(let error) = outcome { #expect(error.code == -50002) }
    }

    @Test func pipelinedRequestsEachGetTheirOwnReplyWhateverTheOrder() throws {
        let (client, peer) = try Self.pair()
        Thread.run {
            guard let first = peer.readLine()?["id"], let second = peer.readLine()?["id"] else { return }
            // Both replies in one write, the second request's first.
            peer.send(
                #"{"jsonrpc":"2.0","id":\#(second.jsonText),"result":"second"}"# + "\n"
                    + #"{"jsonrpc":"2.0","id":\#(first.jsonText),"result":"first"}"#)
        }
        let first = try client.sendRequest("initialize")
        let second = try client.sendRequest("acquireTokenSilent")
        #expect(first != second)
        #expect(try client.reply(to: first, timeoutSeconds: 10).get() == "first")
        #expect(try client.reply(to: second, timeoutSeconds: 10).get() == "second")
        client.close()
    }

    @Test func reportsAClosedConnectionAndATimeout() throws {
        let (client, peer) = try Self.pair()
        #expect(throws: JSONRPCClient.Failure.timedOut) { try client.call("ping", timeoutSeconds: 0.05) }
        close(peer.fd)
        #expect {
            try client.call("ping", timeoutSeconds: 5)
        } throws: { error in
            if case .closed? = error as? JSONRPCClient.Failure { true } else { false }
        }
    }
}

/// A value shared with the peer's thread.
final class Mutexed<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func set(_ newValue: Value) { value.withLock { $0 = newValue } }
    func get() -> Value { value.withLock { $0 } }
}

enum Thread {
    static func run(_ body: @escaping @Sendable () -> Void) { try? POSIX.startThread(body) }
}
