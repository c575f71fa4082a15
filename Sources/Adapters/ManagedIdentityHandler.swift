import Crypto
import JSON
import Logging
import Loopback

/// The managed-identity endpoint's handler on a ``LoopbackHTTPServer``: checks the request
/// (``ManagedIdentityProtocol/evaluate(method:target:headers:secret:)``), asks the token
/// source, and answers in the shape the Azure SDKs read, refusals included.
struct ManagedIdentityHandler: LoopbackHTTPHandler {
    let secret: String
    let clientId: String
    let tokens: @Sendable (_ scope: String, _ renewal: LocalTokenServer.Renewal?) -> Result<LocalTokenServer.Token, ReplyError>
    let logger: Logger

    func reply(to request: HTTPServerRequest) -> HTTPReply {
        let target = request.query.isEmpty ? request.path : request.path + "?" + request.query
        switch ManagedIdentityProtocol.evaluate(method: request.method, target: target, headers: request.headerFields, secret: secret) {
        case .failure(let refused):
            logger.info("managed-identity request refused", metadata: ["status": "\(refused.reply.status)"])
            return HTTPReply.json(refused.reply)
        case .success(let tokenRequest):
            switch token(for: tokenRequest) {
            case .success(let answer):
                return HTTPReply.json(
                    ManagedIdentityProtocol.tokenReply(
                        token: answer.token, expiresOn: answer.expiresOn, tokenType: answer.tokenType,
                        resource: tokenRequest.resource, clientId: clientId, version: tokenRequest.version))
            case .failure(let failure):
                logger.info("managed-identity token not served", metadata: ["status": "\(failure.reply.status)"])
                return HTTPReply.json(failure.reply)
            }
        }
    }

    /// The token for `request`; when the one it would serve is the one the client says was
    /// revoked (`token_sha256_to_refresh`), a renewed one instead.
    private func token(for request: ManagedIdentityProtocol.TokenRequest) -> Result<LocalTokenServer.Token, ReplyError> {
        let answer = tokens(request.scope, nil)
        guard let revoked = request.revokedTokenSHA256, case .success(let served) = answer, Self.sha256Hex(served.token) == revoked
        else { return answer }
        logger.info("managed-identity token renewed: the client named it revoked")
        return tokens(request.scope, LocalTokenServer.Renewal(capabilities: request.capabilities))
    }

    static func sha256Hex(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    func reply(refusing refusal: HTTPRefusal) -> HTTPReply {
        logger.info("managed-identity request refused", metadata: ["status": "\(refusal.status.code)"])
        return HTTPReply.json(ManagedIdentityProtocol.Reply.error(refusal.status.code, refusal.message))
    }
}
