import JSON

/// A request of the protocol as a type, as sourcekit-lsp declares its requests: the method's
/// name, its params (the members it reads, declared once, decoded from JSON once, at the edge)
/// and the type of its result. The server decodes one from the params it is sent
/// (``init(decoding:)``) and hands its handler the typed value; a client in this process or
/// across a socket builds one and sends ``params``.
public protocol RequestType: Sendable {
    /// What the method answers.
    associatedtype Response: ResponseType
    /// The method's name on the wire.
    static var method: String { get }
    /// The params members the method reads: the edge allows exactly these (an unknown member
    /// is -32602 with a "did you mean" suggestion), the forward socket's table allows those of
    /// them a forwarded session may set, the forward tests walk every one.
    static var parameters: Set<String> { get }
    /// The request from its params, already checked against ``parameters``; each bad member
    /// is -32602 naming it by its dotted path.
    init(_ params: Params) throws(RPCError)
    /// The params, as sent on the wire.
    var params: JSONValue { get }
}

extension RequestType {
    /// Decodes the params a request carried: unknown members refused, then each member checked.
    public init(decoding params: JSONValue?) throws(RPCError) {
        try self.init(Params(params, allowed: Self.parameters))
    }
}

/// A method's result as a type: encoded once by the server (``result``), decoded once by a
/// client (``init(decoding:)``), never picked apart member by member by its callers.
public protocol ResponseType: Sendable {
    /// The result from its JSON; a result without a member the type needs is -32603 naming it.
    init(decoding result: JSONValue) throws(RPCError)
    /// The result, as sent on the wire.
    var result: JSONValue { get }
}

/// A result with no members a caller reads (`ping`): any JSON object.
public struct EmptyResponse: ResponseType {
    public init() {}
    public init(decoding result: JSONValue) throws(RPCError) {}
    public var result: JSONValue { [:] }
}

extension RPCError {
    /// A result that lacks a member its type needs, or has one of another type: the engine and
    /// its client disagree on the protocol.
    public static func malformedResult(_ method: String, member: String) -> RPCError {
        .internalError("the \(method) result has no valid '\(member)'")
    }
}
