import JSON

/// One message from the peer, classified per JSON-RPC 2.0 section 4/5.
public enum IncomingMessage: Sendable, Equatable {
    /// A call that expects exactly one reply.
    case request(id: RequestID, method: String, params: JSONValue?)
    /// A call without `id`: never answered.
    case notification(method: String, params: JSONValue?)
    /// A reply to a request this server sent to the peer.
    case response(id: RequestID, outcome: Result<JSONValue, RPCError>)
    /// Not a valid message; answered with `error` and `id` (or `null` when unknown).
    case invalid(id: RequestID, error: RPCError)

    /// Classifies one element of the input (a whole message or a batch member).
    public init(_ value: JSONValue) {
        guard let object = value.objectValue else {
            self = .invalid(id: .null, error: .invalidRequest("a message must be an object, not \(value.typeName)"))
            return
        }
        let rawID = object["id"]
        let id = rawID.flatMap(RequestID.init)
        if rawID != nil, id == nil {
            self = .invalid(id: .null, error: .invalidRequest("id must be a string, number or null"))
            return
        }
        guard object["jsonrpc"] == "2.0" else {
            self = .invalid(id: id ?? .null, error: .invalidRequest(#"member "jsonrpc" must be exactly "2.0""#))
            return
        }
        if object["method"] == nil, let id, object["result"] != nil || object["error"] != nil {
            self = Self.response(id: id, object: object)
            return
        }
        guard let method = object["method"]?.stringValue else {
            self = .invalid(id: id ?? .null, error: .invalidRequest(#"member "method" must be a string"#))
            return
        }
        // `"params": null` means no params: Emacs's jsonrpc.el (Eglot) sends it (with
        // `shutdown` and `exit`), and LSP servers accept it.
        let params: JSONValue? = object["params"]?.isNull == true ? Optional.none : object["params"]
        if let params, params.objectValue == nil, params.arrayValue == nil {
            self = .invalid(
                id: id ?? .null,
                error: .invalidRequest(
                    #"member "params" must be an object of named members (or null, or absent), not \#(params.typeName)"#))
            return
        }
        self =
            id.map { .request(id: $0, method: method, params: params) }
            ?? .notification(method: method, params: params)
    }

    private static func response(id: RequestID, object: JSONObject) -> IncomingMessage {
        if let error = object["error"]?.objectValue {
            let code = error["code"]?.intValue.map(Int.init) ?? -32603
            let message = error["message"]?.stringValue ?? "error without a message"
            let data = error["data"]?.objectValue ?? [:]
            let name = data["name"]?.stringValue ?? "peerError"
            return .response(id: id, outcome: .failure(RPCError(code: code, message: message, name: name, data: data)))
        }
        return .response(id: id, outcome: .success(object["result"] ?? .null))
    }
}
