import JSON
import Logging
import Loopback

/// azd's external-authentication endpoint's handler on a ``LoopbackHTTPServer``: checks the
/// request (``AzdAuthProtocol/evaluate(method:path:query:headers:body:key:)``), asks the token
/// source, and answers in the shape azd's `RemoteCredential` reads.
struct AzdAuthHandler: LoopbackHTTPHandler {
    let key: String
    let tokens: @Sendable (AzdAuthProtocol.TokenRequest) -> AzdAuthProtocol.Reply
    let logger: Logger

    func reply(to request: HTTPServerRequest) -> HTTPReply {
        let evaluated = AzdAuthProtocol.evaluate(
            method: request.method, path: request.path, query: request.query, headers: request.headerFields, body: request.body, key: key)
        switch evaluated {
        case .failure(let refused):
            logger.info("azd-auth request refused", metadata: ["status": "\(refused.reply.status)"])
            return HTTPReply.json(refused.reply)
        case .success(let tokenRequest):
            let reply = tokens(tokenRequest)
            if reply.body["status"]?.stringValue != "success" {
                logger.info("azd-auth token not served", metadata: ["code": "\(reply.body["code"]?.stringValue ?? "")"])
            }
            return HTTPReply.json(reply)
        }
    }

    func reply(refusing refusal: HTTPRefusal) -> HTTPReply {
        logger.info("azd-auth request refused", metadata: ["status": "\(refusal.status.code)"])
        return HTTPReply.json(AzdAuthProtocol.Reply.refused(refusal.status.code, refusal.message))
    }
}
