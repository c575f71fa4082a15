import JSON
import JSONRPC

/// What a verb (or the agent's SSH keeper) speaks to its engine through: a JSON-RPC client of a
/// running agent's socket (``JSONRPCClient``), or the engine in this process, called directly
/// (``LocalEngineClient``). Requests are sent, then their replies waited for, on the caller's
/// one thread; meanwhile the engine's notifications and requests (`deviceCode`, `openUrl`) go
/// to the two handlers. Callers send typed requests (``RequestType``, ``send(_:)``).
public protocol EngineClient: AnyObject {
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

extension EngineClient {
    /// Sends a typed request; ``reply(to:as:timeoutSeconds:)`` waits for its typed reply.
    public func send<Request: RequestType>(_ request: Request) throws(JSONRPCClient.Failure) -> RequestID {
        try sendRequest(Request.method, params: request.params)
    }

    /// The reply to `id`, sent as a `Request`: its typed result, or the engine's error object as
    /// `.failure` (a result that does not fit the type too, -32603).
    public func reply<Request: RequestType>(
        to id: RequestID, as type: Request.Type, timeoutSeconds: Double?
    ) throws(JSONRPCClient.Failure) -> Result<Request.Response, RPCError> {
        switch try reply(to: id, timeoutSeconds: timeoutSeconds) {
        case .success(let result): Result { () throws(RPCError) in try Request.Response(decoding: result) }
        case .failure(let error): .failure(error)
        }
    }

    /// Sends a typed request and waits for its typed reply.
    public func call<Request: RequestType>(
        _ request: Request, timeoutSeconds: Double?
    ) throws(JSONRPCClient.Failure) -> Result<Request.Response, RPCError> {
        try reply(to: try send(request), as: Request.self, timeoutSeconds: timeoutSeconds)
    }
}
