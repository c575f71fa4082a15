import Testing

@testable import JSONRPC

/// Feeds `input` in chunks of `chunkSize` bytes (1 = byte by byte) and collects the events.
private func decode(_ input: [UInt8], chunkSize: Int = .max, limit: Int = 1 << 20) -> (Framing?, [FrameEvent]) {
    var decoder = FrameDecoder(maxMessageSize: limit)
    var events: [FrameEvent] = []
    var offset = 0
    while offset < input.count {
        let end = min(input.count, offset + chunkSize)
        decoder.feed(Array(input[offset..<end])) { events.append($0) }
        offset = end
    }
    decoder.finish { events.append($0) }
    return (decoder.framing, events)
}

private func messages(_ events: [FrameEvent]) -> [String] {
    events.compactMap { if case .message(let m) = $0 { String(decoding: m, as: UTF8.self) } else { nil } }
}

private func errorNames(_ events: [FrameEvent]) -> [String] {
    events.compactMap { if case .error(let e) = $0 { e.data["name"]?.stringValue } else { nil } }
}

private func lsp(_ body: String) -> String { "Content-Length: \(body.utf8.count)\r\n\r\n\(body)" }

@Suite struct NDJSONFramingTests {
    let stream = Array(" \n{\"a\":1}\r\n\n  \n[2]\n{\"é\":\"ü\"}\n".utf8)

    @Test func splitsLinesAndSkipsBlankOnes() {
        let (framing, events) = decode(stream)
        #expect(framing == .ndjson)
        #expect(messages(events) == [#"{"a":1}"#, "[2]", #"{"é":"ü"}"#])
    }

    @Test(arguments: [1, 2, 3, 7, 64])
    func givesTheSameMessagesWhateverTheChunkSize(chunk: Int) {
        #expect(decode(stream, chunkSize: chunk).1 == decode(stream).1)
    }

    @Test func takesALastLineWithoutNewlineAtEndOfInput() {
        #expect(messages(decode(Array("{\"a\":1}\n{\"b\":2}".utf8)).1) == [#"{"a":1}"#, #"{"b":2}"#])
    }

    @Test(arguments: [1, 5, 1000])
    func reportsAnOversizedLineOnceAndResynchronises(chunk: Int) {
        let big = "{\"x\":\"" + String(repeating: "y", count: 200) + "\"}"
        let input = Array("\(big)\n{\"ok\":1}\n".utf8)
        let (_, events) = decode(input, chunkSize: chunk, limit: 64)
        #expect(errorNames(events) == ["messageTooLarge"])
        #expect(messages(events) == [#"{"ok":1}"#])
    }

    @Test func acceptsALineOfExactlyTheLimit() {
        let body = "{\"k\":\"" + String(repeating: "v", count: 56) + "\"}"  // 64 bytes
        #expect(body.utf8.count == 64)
        #expect(messages(decode(Array((body + "\r\n").utf8), chunkSize: 3, limit: 64).1) == [body])
    }

    @Test func choosesNDJSONForAnyOtherFirstByte() {
        let (framing, events) = decode(Array("x y\n".utf8))
        #expect(framing == .ndjson)
        #expect(messages(events) == ["x y"])
    }

    /// Only an upper-case `C` (as in `Content-Length:`) selects LSP framing.
    @Test func choosesNDJSONForALowerCaseC() {
        let (framing, events) = decode(Array("content-length: 2\r\n\r\n{}\n".utf8))
        #expect(framing == .ndjson)
        #expect(messages(events) == ["content-length: 2", "{}"])
    }
}

@Suite struct LSPFramingTests {
    let stream = Array(
        (lsp(#"{"a":1}"#) + "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 9\r\n\r\n{\"é\":[]}" + lsp("[]")).utf8)

    @Test func readsFramesWithAnyHeaderCase() {
        let (framing, events) = decode(stream)
        #expect(framing == .lsp)
        #expect(messages(events) == [#"{"a":1}"#, #"{"é":[]}"#, "[]"])
        #expect(errorNames(events).isEmpty)
    }

    @Test(arguments: [1, 2, 5, 13])
    func givesTheSameMessagesWhateverTheChunkSize(chunk: Int) {
        #expect(decode(stream, chunkSize: chunk).1 == decode(stream).1)
    }

    @Test func acceptsLFOnlyHeaders() {
        #expect(messages(decode(Array("Content-Length: 2\n\n{}".utf8)).1) == ["{}"])
    }

    @Test(arguments: [1, 4, 1000])
    func skipsAnOversizedBodyWithoutBufferingIt(chunk: Int) {
        let input = Array((lsp(String(repeating: " ", count: 500)) + lsp("{}")).utf8)
        let (_, events) = decode(input, chunkSize: chunk, limit: 100)
        #expect(errorNames(events) == ["messageTooLarge"])
        #expect(messages(events) == ["{}"])
    }

    @Test(arguments: [1, 3, 1000])
    func resynchronisesAfterGarbage(chunk: Int) {
        let input = Array(("Content-Length: 2\r\n\r\n{}" + "garbage here\r\n" + lsp("[1]") + "junk" + lsp("[2]")).utf8)
        let (_, events) = decode(input, chunkSize: chunk)
        #expect(messages(events) == ["{}", "[1]", "[2]"])
        #expect(errorNames(events) == ["parseError", "parseError"])
    }

    @Test func reportsANonNumericLength() {
        let (_, events) = decode(Array(("Content-Length: abc\r\n\r\n" + lsp("{}")).utf8))
        #expect(errorNames(events) == ["parseError"])
        #expect(messages(events) == ["{}"])
    }

    @Test func survivesAnEndlessHeaderLine() {
        let input = Array(("Content-Type: " + String(repeating: "x", count: 5000) + "\r\n" + lsp("{}")).utf8)
        let (_, events) = decode(input, chunkSize: 100)
        #expect(messages(events) == ["{}"])
        #expect(errorNames(events) == ["parseError"])
    }

    @Test func reportsAFrameTruncatedByEndOfInput() {
        let (_, events) = decode(Array("Content-Length: 10\r\n\r\n{}".utf8))
        #expect(messages(events).isEmpty)
        #expect(errorNames(events) == ["parseError"])
    }

    /// A line that looks like a header (`C{"a":1}` has a colon) then end of input: an
    /// unfinished header block, answered with a parse error rather than silence.
    @Test(arguments: ["C{\"jsonrpc\":\"2.0\",\"id\":1}\n", "Content-Type: x\r\n"])
    func reportsAHeaderBlockEndedByEndOfInput(text: String) {
        let (framing, events) = decode(Array(text.utf8))
        #expect(framing == .lsp)
        #expect(messages(events).isEmpty)
        #expect(errorNames(events) == ["parseError"])
    }

    @Test func framesRepliesWithTheByteLength() {
        var out: [UInt8] = []
        Framing.lsp.frame(Array("\"é\"".utf8), into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "Content-Length: 4\r\n\r\n\"é\"")
        out = []
        Framing.ndjson.frame(Array("{}".utf8), into: &out)
        #expect(out == Array("{}\n".utf8))
    }
}
