import JSON
import JSONRPC

/// What a verb speaks to its engine through: a JSON-RPC client of a running agent's socket
/// (``JSONRPCClient``), or the engine in this process, called directly (``LocalEngineClient``).
/// Requests are sent, then their replies waited for, on the verb's one thread; meanwhile the
/// engine's notifications and requests (`deviceCode`, `openUrl`) go to the two handlers.
protocol EngineClient: AnyObject {
    /// Called with each engine notification (`deviceCode`, ...).
    var onNotification: (String, JSONValue?) -> Void { get set }
    /// Answers each engine request (`openUrl`, ...).
    var onRequest: (String, JSONValue?) -> Result<JSONValue, RPCError> { get set }
    /// Sends a request; ``reply(to:timeoutSeconds:)`` waits for its reply.
    func sendRequest(_ method: String, params: JSONValue) throws(JSONRPCClient.Failure) -> RequestID
    /// The reply to `id`: the result, or the engine's error object as `.failure`.
    func reply(to id: RequestID, timeoutSeconds: Double?) throws(JSONRPCClient.Failure) -> Result<JSONValue, RPCError>
    /// Ends the connection (an engine in this process stops answering).
    func close()
}

extension JSONRPCClient: EngineClient {}
