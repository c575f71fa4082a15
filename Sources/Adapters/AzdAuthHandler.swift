import JSON
import Logging
import Loopback

/// azd's external-authentication endpoint's handler on a ``LoopbackHTTPServer``: checks the
/// request (``AzdAuthProtocol/evaluate(method:path:query:headers:body:key:)``), asks the token
/// source, and answers in the shape azd's `RemoteCredential` reads.
struct AzdAuthHandler: LoopbackHTTPHandler {
    let key: String
    let tokens: AzdAuthServer.TokenSource
    let logger: Logger

    func reply(to request: HTTPServerRequest) -> HTTPReply {
        let headers = Dictionary(request.headers.map { ($0.name, $0.value) }) { first, _ in first }
        let evaluated = AzdAuthProtocol.evaluate(
            method: request.method, path: request.path, query: request.query, headers: headers, body: request.body, key: key)
        switch evaluated {
        case .failure(let refused):
            logger.info("azd-auth request refused", metadata: ["status": "\(refused.reply.status)"])
            return Self.http(refused.reply)
        case .success(let tokenRequest):
            let reply = tokens(tokenRequest)
            if reply.body["status"]?.stringValue != "success" {
                logger.info("azd-auth token not served", metadata: ["code": "\(reply.body["code"]?.stringValue ?? "")"])
            }
            return Self.http(reply)
        }
    }

    func reply(refusing refusal: HTTPRefusal) -> HTTPReply {
        logger.info("azd-auth request refused", metadata: ["status": "\(refusal.status.code)"])
        return Self.http(.refused(refusal.status.code, refusal.message))
    }

    /// The reply on the wire: JSON, never cached.
    static func http(_ reply: AzdAuthProtocol.Reply) -> HTTPReply {
        HTTPReply(
            status: HTTPStatus(code: reply.status, reason: ManagedIdentityProtocol.reason(reply.status)),
            body: String(decoding: reply.body.serialized(), as: UTF8.self), contentType: "application/json")
    }
}
