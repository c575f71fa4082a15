import JSON

/// The messages this server writes.
public enum OutgoingMessage {
    public static func result(_ result: JSONValue, id: RequestID) -> JSONValue {
        ["jsonrpc": "2.0", "id": id.json, "result": result]
    }

    public static func error(_ error: RPCError, id: RequestID) -> JSONValue {
        ["jsonrpc": "2.0", "id": id.json, "error": error.json]
    }

    public static func notification(_ method: String, params: JSONValue) -> JSONValue {
        ["jsonrpc": "2.0", "method": .string(method), "params": params]
    }

    public static func request(_ method: String, params: JSONValue, id: RequestID) -> JSONValue {
        ["jsonrpc": "2.0", "id": id.json, "method": .string(method), "params": params]
    }
}
