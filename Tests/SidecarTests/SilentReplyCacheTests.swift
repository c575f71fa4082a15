import JSON
import JSONRPC
import Testing

@testable import AuthCore
@testable import Sidecar

/// A cached answer's text from the template (tokens put in verbatim, the correlation id
/// between the head and the tail) is the text serializing the result whole makes, byte for
/// byte, whatever the tokens hold.
@Suite struct SilentReplyCacheTests {
    private static let jwt =
        "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2dyYXBoIiwibmFtZSI6IkFsaWNlIn0.c2lnbmF0dXJlLWJ5dGVz_-"

    private func answer(
        accessToken: String, idToken: String?, stamp: UInt64 = 1, claims: IDTokenClaims = IDTokenClaims(["name": .string("Alice é")])
    ) -> CachedSilentAnswer {
        let account = Account(
            homeAccountId: "oid.tid", localAccountId: "oid", environment: "login.microsoftonline.com", tenantId: "tid",
            username: "alice@contoso.com", name: "Alice \"A\" Example", idTokenClaims: claims)
        return CachedSilentAnswer(identity: .init(stamp: stamp, key: "key-\(accessToken.count)")) { correlationId in
            TokenResult(
                accessToken: accessToken, tokenType: "Bearer", expiresOn: 1_795_681_767, scopes: ["User.Read"],
                account: account, idToken: idToken, tenantId: "tid", authority: "https://login.microsoftonline.com/tid",
                correlationId: correlationId, fromCache: true)
        }
    }

    private func text(_ result: SerializedResult) -> String { String(decoding: result.pieces.flatMap { $0 }, as: UTF8.self) }

    private func expectSameText(_ answer: CachedSilentAnswer) {
        let cache = SilentReplyCache()
        for id in ["11111111-2222-3333-4444-555555555555", "abc"] {  // the first makes the template, the second reuses it
            let whole = String(decoding: AuthJSON.tokenResult(answer.result(id)).serialized(), as: UTF8.self)
            #expect(text(cache.result(of: answer, correlationId: id)) == whole)
        }
    }

    @Test func tokensPutInVerbatimGiveTheTextOfTheWholeSerialization() {
        #expect(SilentReplyCache.isVerbatim(Self.jwt))
        expectSameText(answer(accessToken: Self.jwt, idToken: Self.jwt + "x"))
        expectSameText(answer(accessToken: Self.jwt, idToken: nil))
    }

    @Test func tokensJSONMustEscapeAreSerializedByJansson() {
        for odd in ["quote\"d", "back\\slash", "tab\there", "caf\u{e9}", "\u{1}accessToken\u{1}", "\u{1}correlationId\u{1}", ""] {
            #expect(!SilentReplyCache.isVerbatim(odd) || odd.isEmpty)
            expectSameText(answer(accessToken: odd, idToken: Self.jwt))
            expectSameText(answer(accessToken: Self.jwt, idToken: odd))
        }
    }

    /// Claims read from a token go in as the token carries them: the same text as their
    /// serialization when the token's is compact (as issuers write it), else the same JSON.
    @Test func claimsFromATokenGoInAsItsTextIs() throws {
        let compactText = #"{"aud":"app","tid":"t","name":"Renée \"R\"","iat":1795681767,"roles":["a","b"]}"#
        let compact = try #require(IDTokenClaims(json: Array(compactText.utf8)))
        #expect(compact.verbatimText != nil)
        expectSameText(answer(accessToken: Self.jwt, idToken: Self.jwt, claims: compact))

        let spaced = Array(#"{ "aud" : "app", "name" : "Ren\u00e9e", "url" : "https:\/\/x" }"#.utf8)
        let claims = try #require(IDTokenClaims(json: spaced))
        let cache = SilentReplyCache()
        let answer = answer(accessToken: Self.jwt, idToken: Self.jwt, claims: claims)
        let reply = cache.result(of: answer, correlationId: "abc")
        #expect(reply.pieces.count == 3)  // the template: head, correlation id, tail
        let replyText = reply.pieces.flatMap { $0 }
        #expect(SilentReplyCache.occurrences(of: spaced, in: replyText).count == 1)
        #expect(try JSONValue.parse(replyText) == JSONValue.parse(AuthJSON.tokenResult(answer.result("abc")).serialized()))

        // A line break between members would end a newline-delimited message: serialized.
        let broken = try #require(IDTokenClaims(json: Array("{\"aud\":\"app\",\n\"tid\":\"t\"}".utf8)))
        #expect(broken.verbatimText == nil)
        expectSameText(self.answer(accessToken: Self.jwt, idToken: Self.jwt, claims: broken))
    }

    @Test func findsEveryOccurrence() {
        #expect(SilentReplyCache.occurrences(of: Array("ab".utf8), in: Array("abxab".utf8)) == [0, 3])
        #expect(SilentReplyCache.occurrences(of: Array("aa".utf8), in: Array("aaa".utf8)) == [0, 1])
        #expect(SilentReplyCache.occurrences(of: Array("abc".utf8), in: Array("ab".utf8)).isEmpty)
        #expect(SilentReplyCache.occurrences(of: Array("z".utf8), in: Array("abc".utf8)).isEmpty)
        #expect(SilentReplyCache.occurrences(of: [], in: Array("abc".utf8)).isEmpty)
    }
}
