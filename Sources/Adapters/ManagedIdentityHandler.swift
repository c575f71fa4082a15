import JSON
import Logging
import Loopback

/// The managed-identity endpoint's handler on a ``LoopbackHTTPServer``: checks the request
/// (``ManagedIdentityProtocol/evaluate(method:target:headers:secret:)``), asks the token
/// source, and answers in the shape the Azure SDKs read, refusals included.
struct ManagedIdentityHandler: LoopbackHTTPHandler {
    let secret: String
    let clientId: String
    let tokens: @Sendable (_ scope: String) -> Result<LocalTokenServer.Token, ReplyError>
    let logger: Logger

    func reply(to request: HTTPServerRequest) -> HTTPReply {
        let target = request.query.isEmpty ? request.path : request.path + "?" + request.query
        switch ManagedIdentityProtocol.evaluate(method: request.method, target: target, headers: request.headerFields, secret: secret) {
        case .failure(let refused):
            logger.info("managed-identity request refused", metadata: ["status": "\(refused.reply.status)"])
            return HTTPReply.json(refused.reply)
        case .success(let tokenRequest):
            switch tokens(tokenRequest.scope) {
            case .success(let answer):
                return HTTPReply.json(
                    ManagedIdentityProtocol.tokenReply(
                        token: answer.token, expiresOn: answer.expiresOn, tokenType: answer.tokenType,
                        resource: tokenRequest.resource, clientId: clientId))
            case .failure(let failure):
                logger.info("managed-identity token not served", metadata: ["status": "\(failure.reply.status)"])
                return HTTPReply.json(failure.reply)
            }
        }
    }

    func reply(refusing refusal: HTTPRefusal) -> HTTPReply {
        logger.info("managed-identity request refused", metadata: ["status": "\(refusal.status.code)"])
        return HTTPReply.json(ManagedIdentityProtocol.Reply.error(refusal.status.code, refusal.message))
    }
}
