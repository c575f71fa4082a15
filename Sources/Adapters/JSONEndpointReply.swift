import JSON
import Loopback

/// A reply of one of the token endpoints (azd's, the managed-identity one): a status and a
/// JSON body, in the shape that endpoint's clients read.
protocol JSONEndpointReply {
    var status: Int { get }
    var body: JSONValue { get }
}

extension AzdAuthProtocol.Reply: JSONEndpointReply {}
extension ManagedIdentityProtocol.Reply: JSONEndpointReply {}

extension HTTPReply {
    /// An endpoint's reply on the wire: JSON, never cached (``HTTPReply`` adds no-store).
    static func json(_ reply: some JSONEndpointReply) -> HTTPReply {
        HTTPReply(
            status: HTTPStatus(code: reply.status), body: String(decoding: reply.body.serialized(), as: UTF8.self),
            contentType: "application/json")
    }
}
