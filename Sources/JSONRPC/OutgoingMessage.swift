import JSON

/// The messages this server writes.
public enum OutgoingMessage {
    public static func result(_ result: JSONValue, id: RequestID) -> JSONValue {
        ["jsonrpc": "2.0", "id": id.json, "result": result]
    }

    /// The reply's text around an already serialized result, as ``result(_:id:)`` serializes
    /// it (`jsonrpc`, `id`, `result`, in that order), in pieces.
    public static func result(_ result: SerializedResult, id: RequestID) -> [[UInt8]] {
        var head: [UInt8] = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
        if case .number(let number) = id {
            head.append(contentsOf: String(number).utf8)
        } else {
            id.json.serialize(into: &head)
        }
        head.append(contentsOf: #","result":"#.utf8)
        return [head] + result.pieces + [closingBrace]
    }

    private static let closingBrace: [UInt8] = [UInt8(ascii: "}")]

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
