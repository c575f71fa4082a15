/// How messages are delimited on the byte stream.
public enum Framing: String, Sendable {
    /// Newline-delimited JSON: one message per line.
    case ndjson
    /// Language Server Protocol framing: `Content-Length: N\r\n\r\n` then N bytes.
    case lsp

    /// The framing a stream uses, judged from its first non-whitespace byte:
    /// `C` (as in `Content-Length:`) means LSP headers, anything else (a lower-case `c`
    /// too, as the protocol says) newline-delimited JSON.
    public init(firstByte: UInt8) {
        self = firstByte == UInt8(ascii: "C") ? .lsp : .ndjson
    }

    /// Appends `body` to `output` framed for this framing.
    public func frame(_ body: [UInt8], into output: inout [UInt8]) {
        frame(pieces: CollectionOfOne(body), into: &output)
    }

    /// Appends the message made of `pieces`, one after the other, framed for this framing.
    public func frame<Pieces: Collection<[UInt8]>>(pieces: Pieces, into output: inout [UInt8]) {
        switch self {
        case .ndjson:
            for piece in pieces { output.append(contentsOf: piece) }
            output.append(UInt8(ascii: "\n"))
        case .lsp:
            let count = pieces.reduce(0) { $0 + $1.count }
            output.append(contentsOf: "Content-Length: \(count)\r\n\r\n".utf8)
            for piece in pieces { output.append(contentsOf: piece) }
        }
    }
}

/// What a frame decoder found in the stream.
public enum FrameEvent: Sendable, Equatable {
    /// The bytes of one message (not yet parsed).
    case message([UInt8])
    /// A framing fault to answer with `id: null`; the decoder has resynchronised.
    case error(RPCError)
}

extension UInt8 {
    var isJSONWhitespace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D }
}

/// Splits a byte stream into messages, choosing the framing from the first non-whitespace
/// byte. Feed it bytes as they arrive, in chunks of any size.
///
/// ```swift
/// var decoder = FrameDecoder(maxMessageSize: 1 << 22)
/// decoder.feed(chunk) { event in ... }   // zero or more events per chunk
/// decoder.finish { event in ... }        // at end of input
/// ```
public struct FrameDecoder: Sendable {
    public private(set) var framing: Framing?
    private var ndjson: NDJSONDecoder
    private var lsp: LSPDecoder

    public init(maxMessageSize: Int) {
        ndjson = NDJSONDecoder(maxMessageSize: maxMessageSize)
        lsp = LSPDecoder(maxMessageSize: maxMessageSize)
    }

    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ emit: (FrameEvent) -> Void) {
        var chunk = chunk[...]
        if framing == nil {
            guard let first = chunk.firstIndex(where: { !$0.isJSONWhitespace }) else { return }
            framing = Framing(firstByte: chunk[first])
            chunk = chunk[first...]
        }
        let rest = UnsafeRawBufferPointer(rebasing: chunk)
        switch framing {
        case .lsp: lsp.feed(rest, emit)
        default: ndjson.feed(rest, emit)
        }
    }

    public mutating func feed(_ bytes: [UInt8], _ emit: (FrameEvent) -> Void) {
        bytes.withUnsafeBytes { feed($0, emit) }
    }

    /// Reports what is left at end of input: a last line without a newline is a message;
    /// a truncated LSP frame is an error.
    public mutating func finish(_ emit: (FrameEvent) -> Void) {
        switch framing {
        case .lsp: lsp.finish(emit)
        case .ndjson: ndjson.finish(emit)
        case nil: break
        }
    }
}
