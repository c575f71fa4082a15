import JSON
import Testing

@testable import JSONRPC

/// A line kept by the memo is answered without parsing only when it differs from a kept one
/// by a plain id; everything else takes the normal path.
@Suite struct RequestLineMemoTests {
    private static let kept = #"{"jsonrpc":"2.0","method":"acquireTokenSilent","params":{"scopes":["User.Read"]},"id":7}"#

    private func memo(keeping lines: [String]) throws -> RequestLineMemo {
        var memo = RequestLineMemo()
        for line in lines {
            memo.remember(IncomingMessage(try JSONValue.parse(line)), line: Array(line.utf8))
        }
        return memo
    }

    /// What the memo makes of `line`, checked against what parsing makes of it.
    private func fromMemo(_ memo: RequestLineMemo, _ line: String) throws -> IncomingMessage? {
        guard let message = memo.request(in: Array(line.utf8)) else { return nil }
        #expect(message == IncomingMessage(try JSONValue.parse(line)), "\(line)")
        return message
    }

    private func line(id: String, params: String = #"{"scopes":["User.Read"]}"#) -> String {
        #"{"jsonrpc":"2.0","method":"acquireTokenSilent","params":\#(params),"id":\#(id)}"#
    }

    @Test func anotherPlainIdIsTheSameRequest() throws {
        let memo = try memo(keeping: [Self.kept])
        let params: JSONValue = ["scopes": ["User.Read"]]
        #expect(try fromMemo(memo, line(id: "8")) == .request(id: .number(8), method: "acquireTokenSilent", params: params))
        #expect(try fromMemo(memo, line(id: "0")) == .request(id: .number(0), method: "acquireTokenSilent", params: params))
        #expect(try fromMemo(memo, line(id: "999999999999999")) != nil)
        #expect(try fromMemo(memo, line(id: #""s-1""#)) == .request(id: .string("s-1"), method: "acquireTokenSilent", params: params))
        #expect(try fromMemo(memo, line(id: #""""#)) == .request(id: .string(""), method: "acquireTokenSilent", params: params))
        #expect(try fromMemo(memo, Self.kept) != nil)
    }

    @Test func aChangedByteTakesTheNormalPath() throws {
        let memo = try memo(keeping: [Self.kept])
        let bytes = Array(Self.kept.utf8)
        let idStart = bytes.count - 2  // the 7
        for index in bytes.indices where index != idStart {
            var changed = bytes
            changed[index] = changed[index] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
            #expect(memo.request(in: changed) == nil, "byte \(index)")
        }
        #expect(try fromMemo(memo, line(id: "8", params: #"{"scopes":["User.Read"],"forceRefresh":true}"#)) == nil)
        #expect(memo.request(in: Array((Self.kept + " ").utf8)) == nil)
        #expect(memo.request(in: Array(Self.kept.dropLast().utf8)) == nil)
        #expect(memo.request(in: Array(line(id: "8 ").utf8)) == nil)
    }

    @Test func aWeirdIdTakesTheNormalPath() throws {
        let memo = try memo(keeping: [Self.kept])
        let weird = [
            "-1", "1.5", "1e3", "08", "00", "1234567890123456", "null", "true", "{}", "[8]", #""a\"b""#, #""\u0041""#,
            "\"é\"", "\"a\u{1}b\"", "\"" + String(repeating: "a", count: 65) + "\"", #""unterminated"#, "",
        ]
        for id in weird {
            #expect(memo.request(in: Array(line(id: id).utf8)) == nil, "id \(id)")
        }
    }

    @Test func onlyLinesWhoseIdIsSureToBeFoundAreKept() throws {
        let unsure = [
            #"{"jsonrpc":"2.0","method":"m","params":{"id":7},"id":7}"#,  // "id" twice
            #"{"jsonrpc":"2.0","method":"m","params":{"x":"\u0041"},"id":7}"#,  // a backslash
            #"{"jsonrpc":"2.0","method":"m","params":{"x":7},"\u0069d":7}"#,  // an escaped key
            #"{"jsonrpc":"2.0","method":"m","id":-7}"#,  // not a plain id
            #"{"jsonrpc":"2.0","method":"m","id":null}"#,
            #"{"jsonrpc":"2.0","method":"m"}"#,  // a notification
            #"{"jsonrpc":"2.0","id":7,"result":{}}"#,  // a response
            #"{"jsonrpc":"1.0","method":"m","id":7}"#,  // invalid
        ]
        for text in unsure {
            let memo = try memo(keeping: [text])
            #expect(memo.request(in: Array(text.replacing(":7}", with: ":8}").utf8)) == nil, "\(text)")
            #expect(memo.request(in: Array(text.utf8)) == nil, "\(text)")
        }
        let spaced = #"{ "id" : 7 , "jsonrpc":"2.0","method":"m","params":{"id2":[1]}}"#
        #expect(try fromMemo(try memo(keeping: [spaced]), spaced.replacing(" 7 ", with: " \"q\" ")) != nil)
    }

    @Test func keepsTheLatestFewShapes() throws {
        let lines = (0..<(RequestLineMemo.capacity + 1)).map { line(id: "1", params: #"{"n":\#($0)}"#) }
        let memo = try memo(keeping: lines)
        #expect(memo.request(in: Array(lines[0].utf8)) == nil)
        for text in lines.dropFirst() { #expect(try fromMemo(memo, text) != nil) }
    }
}
