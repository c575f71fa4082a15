import JSON

/// A JSON-RPC error object: `code`, `message` and optional `data`.
///
/// Every error this server sends carries `data.name`, a stable camelCase name, so clients can
/// match on names as well as codes.
public struct RPCError: Error, Sendable, Equatable {
    public var code: Int
    public var message: String
    public var data: JSONObject

    public init(code: Int, message: String, name: String, data: JSONObject = [:]) {
        self.code = code
        self.message = message
        var data = data
        data["name"] = .string(name)
        self.data = data
    }

    /// The error object as JSON.
    public var json: JSONValue {
        ["code": .int(Int64(code)), "message": .string(message), "data": .object(data)]
    }
}

extension RPCError {
    /// -32700: the text is not JSON.
    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: -32700, message: "Parse error: \(detail)", name: "parseError")
    }

    /// -32600: JSON, but not a valid request object.
    public static func invalidRequest(_ detail: String, name: String = "invalidRequest", data: JSONObject = [:]) -> RPCError {
        RPCError(code: -32600, message: "Invalid Request: \(detail)", name: name, data: data)
    }

    /// -32600 for a message over the size limit.
    /// A message within the size limit whose shape passes ``JSONShapeLimits/message``
    /// (checked before parsing: the message is refused whole, id null).
    public static func shapeLimit(_ violation: JSONShapeViolation) -> RPCError {
        let (detail, name) =
            switch violation {
            case .rootArrayElements(let limit): ("a batch of more than \(limit) messages", "batchTooLarge")
            case .objectMembers(let limit): ("an object with more than \(limit) members", "objectTooLarge")
            case .items(let limit): ("a message of more than \(limit) JSON values", "messageTooComplex")
            }
        return .invalidRequest(detail, name: name, data: ["limit": .int(Int64(violation.limit))])
    }

    public static func messageTooLarge(limit: Int) -> RPCError {
        .invalidRequest("message larger than \(limit) bytes", name: "messageTooLarge", data: ["limit": .int(Int64(limit))])
    }

    /// -32601.
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: -32601, message: "Method not found: \(method)", name: "methodNotFound", data: [:])
    }

    /// -32602, naming the offending member (a dotted path such as `account.username`).
    public static func invalidParams(_ detail: String, member: String? = nil) -> RPCError {
        RPCError(
            code: -32602, message: "Invalid params: \(detail)", name: "invalidParams",
            data: member.map { ["member": .string($0)] } ?? [:])
    }

    /// -32603.
    public static func internalError(_ detail: String) -> RPCError {
        RPCError(code: -32603, message: "Internal error: \(detail)", name: "internalError")
    }

    /// -32002: a method that needs configuration was called before `initialize`.
    public static let serverNotInitialized = RPCError(
        code: -32002, message: "Server not initialized: send initialize (or start with --client-id) first",
        name: "serverNotInitialized")

    /// -32800: the request was cancelled by `$/cancelRequest` or shutdown.
    public static let requestCancelled = RPCError(
        code: -32800, message: "Request cancelled", name: "requestCancelled")

    /// -32800 for a request of the server's own (`openUrl`) that the peer can no longer answer:
    /// its input ended. Not sent; the handler that asked reports it its own way.
    public static let peerGone = RPCError(
        code: -32800, message: "Request cancelled: the client's input ended before it answered",
        name: "requestCancelled")
}
