import JSON
import Logging
import Loopback

/// The managed-identity endpoint's handler on a ``LoopbackHTTPServer``: checks the request
/// (``ManagedIdentityProtocol/evaluate(method:target:headers:secret:)``), asks the token
/// source, and answers in the shape the Azure SDKs read, refusals included.
struct ManagedIdentityHandler: LoopbackHTTPHandler {
    let secret: String
    let clientId: String
    let tokens: ManagedIdentityServer.TokenSource
    let logger: Logger

    func reply(to request: HTTPServerRequest) -> HTTPReply {
        let target = request.query.isEmpty ? request.path : request.path + "?" + request.query
        let headers = Dictionary(request.headers.map { ($0.name, $0.value) }) { first, _ in first }
        switch ManagedIdentityProtocol.evaluate(method: request.method, target: target, headers: headers, secret: secret) {
        case .failure(let refused):
            logger.info("managed-identity request refused", metadata: ["status": "\(refused.reply.status)"])
            return Self.http(refused.reply)
        case .success(let tokenRequest):
            switch tokens(tokenRequest.scope) {
            case .success(let answer):
                return Self.http(
                    ManagedIdentityProtocol.tokenReply(
                        token: answer.token, expiresOn: answer.expiresOn, tokenType: answer.tokenType,
                        resource: tokenRequest.resource, clientId: clientId))
            case .failure(let failure):
                logger.info("managed-identity token not served", metadata: ["status": "\(failure.reply.status)"])
                return Self.http(failure.reply)
            }
        }
    }

    func reply(refusing refusal: HTTPRefusal) -> HTTPReply {
        logger.info("managed-identity request refused", metadata: ["status": "\(refusal.status.code)"])
        return Self.http(.error(refusal.status.code, refusal.message))
    }

    /// The SDK-shaped reply on the wire: JSON, never cached.
    static func http(_ reply: ManagedIdentityProtocol.Reply) -> HTTPReply {
        HTTPReply(
            status: HTTPStatus(code: reply.status, reason: ManagedIdentityProtocol.reason(reply.status)),
            body: String(decoding: reply.body.serialized(), as: UTF8.self), contentType: "application/json")
    }
}
