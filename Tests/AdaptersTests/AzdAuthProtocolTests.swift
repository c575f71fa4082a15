import JSON
import Testing

@testable import Adapters

@Suite struct AzdAuthProtocolTests {
    private let headers = ["authorization": "Bearer k3y", "content-type": "application/json"]

    private func evaluate(
        _ body: String, method: String = "POST", path: String = "/token", query: String = "api-version=2023-07-12-preview",
        headers: [String: String]? = nil
    ) -> Result<AzdAuthProtocol.TokenRequest, AzdReplyError> {
        AzdAuthProtocol.evaluate(method: method, path: path, query: query, headers: headers ?? self.headers, body: Array(body.utf8), key: "k3y")
    }

    private func status(_ result: Result<AzdAuthProtocol.TokenRequest, AzdReplyError>) -> Int? {
        if case .failure(let error) = result { return error.reply.status }
        return nil
    }

    @Test func readsWhatAzdSends() {
        #expect(
            evaluate(#"{"scopes":["https://management.azure.com//.default"],"tenantId":"t"}"#)
                == .success(.init(scopes: ["https://management.azure.com//.default"], tenantId: "t", claims: nil)))
        #expect(evaluate(#"{"scopes":["a","b"]}"#) == .success(.init(scopes: ["a", "b"], tenantId: nil, claims: nil)))
        #expect(evaluate(#"{"scopes":["a"],"claims":"eyJhIjoxfQ"}"#) == .success(.init(scopes: ["a"], tenantId: nil, claims: #"{"a":1}"#)))
        let charset = ["authorization": "Bearer k3y", "content-type": "application/json; charset=utf-8"]
        #expect(status(evaluate(#"{"scopes":["a"]}"#, headers: charset)) == nil)
    }

    @Test func refusesOtherRequests() {
        #expect(status(evaluate("{}", path: "/other")) == 404)
        #expect(status(evaluate(#"{"scopes":["a"]}"#, method: "GET")) == 405)
        #expect(status(evaluate(#"{"scopes":["a"]}"#, headers: ["authorization": "Bearer k3Y", "content-type": "application/json"])) == 401)
        #expect(status(evaluate(#"{"scopes":["a"]}"#, headers: ["content-type": "application/json"])) == 401)
        #expect(status(evaluate(#"{"scopes":["a"]}"#, query: "")) == 400)
        #expect(status(evaluate(#"{"scopes":["a"]}"#, headers: ["authorization": "Bearer k3y"])) == 400)
        for body in ["", "[]", #"{"scopes":[]}"#, #"{"scopes":[""]}"#, #"{"scopes":"a"}"#, #"{"scopes":["a"],"tenantId":1}"#] {
            #expect(status(evaluate(body)) == 400, "\(body)")
        }
    }

    @Test func repliesInAzdsShape() {
        let token = AzdAuthProtocol.Reply.token("t", expiresOn: 1_700_000_000)
        #expect(token.status == 200 && token.body == ["status": "success", "token": "t", "expiresOn": "2023-11-14T22:13:20Z"])
        let failure = AzdAuthProtocol.Reply.failure(signInNeeded: true, "sign in")
        #expect(failure.body == ["status": "error", "code": "NotSignedInError", "message": "sign in"])
        #expect(AzdAuthProtocol.Reply.failure(signInNeeded: false, "x").body["code"] == "GetTokenError")
    }
}
