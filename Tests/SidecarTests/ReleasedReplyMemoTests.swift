import JSON
import JSONRPC
import Testing

@testable import Sidecar

/// A reply stage's answer is reused only for the same engine text and params, and the reused
/// text is, byte for byte, what serializing the released value with the new correlation id makes.
@Suite struct ReleasedReplyMemoTests {
    private let released: JSONValue = ["accessToken": "eyJ.a.b", "scopes": ["User.Read"], "correlationId": "id-1", "fromCache": true]
    private let params: JSONValue = ["scopes": ["User.Read"]]

    private func engine(_ part: String, head: String = #"{"accessToken":"eyJ.a.b","idToken":"x","correlationId":""#) -> SerializedResult.Template {
        let text = SerializedResult(head: Array(head.utf8), part: part, tail: Array(#"","fromCache":true}"#.utf8))
        return text.template!
    }

    private func text(_ result: SerializedResult) -> String { String(decoding: result.pieces.flatMap { $0 }, as: UTF8.self) }

    @Test func theSameAnswerAndParamsGetTheReleasedTextWithTheirOwnCorrelationID() throws {
        let memo = ReleasedReplyMemo()
        memo.keep(engine("id-1"), params: params, released: released, text: released.serialized())
        let (reused, value) = try #require(memo.reuse(engine("id-2"), params: params))
        guard case .object(var expected) = released else {
            Issue.record("not an object")
            return
        }
        expected["correlationId"] = "id-2"
        #expect(value == .object(expected))
        #expect(text(reused) == String(decoding: JSONValue.object(expected).serialized(), as: UTF8.self))
    }

    @Test func anotherAnswerOrOtherParamsAreNotReused() {
        let memo = ReleasedReplyMemo()
        memo.keep(engine("id-1"), params: params, released: released, text: released.serialized())
        #expect(memo.reuse(engine("id-2", head: #"{"accessToken":"eyJ.c.d","idToken":"x","correlationId":""#), params: params) == nil)
        #expect(memo.reuse(engine("id-2"), params: ["scopes": ["Mail.Read"]]) == nil)
        #expect(memo.reuse(engine("id-2"), params: nil) == nil)
    }

    @Test func aCorrelationIDFoundTwiceOrNotTheReleasedOnesIsNotKept() {
        let memo = ReleasedReplyMemo()
        let twice: JSONValue = ["accessToken": "id-1", "correlationId": "id-1"]
        memo.keep(engine("id-1"), params: params, released: twice, text: twice.serialized())
        #expect(memo.reuse(engine("id-2"), params: params) == nil)
        memo.keep(engine("id-9"), params: params, released: released, text: released.serialized())
        #expect(memo.reuse(engine("id-2"), params: params) == nil)
    }
}
