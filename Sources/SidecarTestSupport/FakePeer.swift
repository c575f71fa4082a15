import AuthTestSupport
import JSON
import JSONRPC
import Synchronization

/// The JSON-RPC client's side of the server's own messages: answers `openUrl` by playing the
/// URL in a ``ScriptedBrowser`` (as an editor would open it), and records `deviceCode` and
/// every other notification.
public final class FakePeer: Sendable {
    private let browser: ScriptedBrowser
    private let received = Mutex<[(method: String, params: JSONValue?)]>([])
    private let openRequests = Mutex<[JSONValue?]>([])

    public init(browser: ScriptedBrowser) { self.browser = browser }

    /// The notifications received, in order.
    public var notifications: [(method: String, params: JSONValue?)] { received.withLock { $0 } }
    /// The params of each `openUrl` request, in order.
    public var openUrlRequests: [JSONValue?] { openRequests.withLock { $0 } }

    public func install(on client: JSONRPCClient) {
        client.onNotification = { [self] method, params in received.withLock { $0.append((method, params)) } }
        client.onRequest = { [self] method, params in
            guard method == "openUrl" else { return .failure(.methodNotFound(method)) }
            openRequests.withLock { $0.append(params) }
            do {
                try browser.play(params?["url"]?.stringValue ?? "")
                return .success(.object([:]))
            } catch {
                return .failure(RPCError(code: -32000, message: "the scripted browser could not open the URL", name: "browserFailed"))
            }
        }
    }
}
