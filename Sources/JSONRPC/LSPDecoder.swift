/// LSP framing: header lines (`Name: value`, CRLF or LF), a blank line, then
/// `Content-Length` bytes of body.
///
/// Resynchronisation: bytes that are not a header line are reported once (as -32700) and
/// dropped up to the next `Content-Length:`; a body over the size limit is reported and
/// skipped without being buffered.
struct LSPDecoder: Sendable {
    let maxMessageSize: Int
    /// Header lines longer than this are garbage.
    private let maxHeaderLine = 1024

    private enum State: Sendable {
        case headers(contentLength: Int?)
        case body(remaining: Int)
        case skipping(remaining: Int)
    }

    private var state = State.headers(contentLength: nil)
    private var buffer: [UInt8] = []
    private var garbageReported = false
    /// Header lines seen since the last frame (a block of them without Content-Length is an error).
    private var headerLinesSeen = 0

    init(maxMessageSize: Int) { self.maxMessageSize = maxMessageSize }

    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ emit: (FrameEvent) -> Void) {
        var input = chunk[...]
        while !input.isEmpty {
            switch state {
            case .skipping(let remaining):
                let take = min(remaining, input.count)
                input = input.dropFirst(take)
                state = remaining == take ? .headers(contentLength: nil) : .skipping(remaining: remaining - take)
            case .body(let remaining):
                let take = min(remaining - buffer.count, input.count)
                buffer.append(contentsOf: input.prefix(take))
                input = input.dropFirst(take)
                if buffer.count == remaining {
                    emit(.message(buffer))
                    buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 16)
                    state = .headers(contentLength: nil)
                }
            case .headers(let contentLength):
                guard let newline = input.firstIndex(of: UInt8(ascii: "\n")) else {
                    buffer.append(contentsOf: input)
                    input = input[input.endIndex...]
                    if buffer.count > maxHeaderLine { dropGarbageLine(emit) }
                    continue
                }
                buffer.append(contentsOf: input[..<newline])
                input = input[(newline + 1)...]
                headerLine(contentLength: contentLength, emit)
            }
        }
    }

    mutating func finish(_ emit: (FrameEvent) -> Void) {
        switch state {
        case .body:
            emit(.error(.parseError("input ended inside a message body")))
        case .headers(let length) where length != nil || headerLinesSeen > 0 || !buffer.allSatisfy(\.isJSONWhitespace):
            emit(.error(.parseError("input ended inside a header block")))
        default: break
        }
        buffer = []
        state = .headers(contentLength: nil)
    }

    /// Handles one complete header line, now in `buffer` (without its `\n`).
    private mutating func headerLine(contentLength: Int?, _ emit: (FrameEvent) -> Void) {
        if buffer.last == UInt8(ascii: "\r") { buffer.removeLast() }
        defer { buffer.removeAll(keepingCapacity: true) }
        if buffer.isEmpty {
            defer { headerLinesSeen = 0 }
            guard let length = contentLength else {  // blank lines between frames are fine
                if headerLinesSeen > 0 { emit(.error(.parseError("a header block without Content-Length"))) }
                return
            }
            garbageReported = false
            if length > maxMessageSize {
                emit(.error(.messageTooLarge(limit: maxMessageSize)))
                state = length == 0 ? .headers(contentLength: nil) : .skipping(remaining: length)
            } else if length == 0 {
                emit(.message([]))
            } else {
                state = .body(remaining: length)
            }
            return
        }
        let header: HeaderLine
        let embeddedLength = Self.contentLengthOffset(in: buffer).map { $0 > 0 } ?? false
        if let parsed = HeaderLine(buffer), parsed.isContentLength || !embeddedLength {
            header = parsed
        } else {
            reportGarbage(emit)
            // A header may follow garbage on the same line (after a wrong Content-Length).
            guard let start = Self.contentLengthOffset(in: buffer),
                let recovered = HeaderLine(Array(buffer[start...]))
            else {
                state = .headers(contentLength: nil)
                return
            }
            header = recovered
        }
        headerLinesSeen += 1
        guard header.isContentLength else { return }  // Content-Type and others: ignored
        guard let length = header.integerValue else {
            emit(.error(.parseError("Content-Length is not a number")))
            headerLinesSeen = 0  // reported: the rest of this block is not a second error
            state = .headers(contentLength: nil)
            return
        }
        state = .headers(contentLength: length)
    }

    private mutating func dropGarbageLine(_ emit: (FrameEvent) -> Void) {
        reportGarbage(emit)
        if let start = Self.contentLengthOffset(in: buffer) {
            buffer.removeFirst(start)
        } else {
            buffer = Array(buffer.suffix(16))  // could be the start of "Content-Length"
        }
    }

    private mutating func reportGarbage(_ emit: (FrameEvent) -> Void) {
        guard !garbageReported else { return }
        garbageReported = true
        emit(.error(.parseError("expected an LSP header such as Content-Length: N")))
    }

    private static let contentLengthLower = Array("content-length:".utf8)

    static func contentLengthOffset(in bytes: [UInt8]) -> Int? {
        let needle = contentLengthLower
        guard bytes.count >= needle.count else { return nil }
        for start in stride(from: bytes.count - needle.count, through: 0, by: -1) {
            var matched = true
            for (offset, expected) in needle.enumerated() where bytes[start + offset].asciiLowercased != expected {
                matched = false
                break
            }
            if matched { return start }
        }
        return nil
    }
}

/// One `Name: value` header line.
private struct HeaderLine {
    let name: [UInt8]
    let value: [UInt8]

    init?(_ line: [UInt8]) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0,
            line[..<colon].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        name = Array(line[..<colon])
        value = Array(line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 })
    }

    var isContentLength: Bool {
        name.count == 14 && zip(name, "content-length".utf8).allSatisfy { $0.asciiLowercased == $1 }
    }

    /// A decimal value of at most 12 digits (trailing spaces allowed).
    var integerValue: Int? {
        let digits = value.prefix { $0 != 0x20 && $0 != 0x09 }
        guard !digits.isEmpty, digits.count <= 12, value.dropFirst(digits.count).allSatisfy({ $0 == 0x20 || $0 == 0x09 }),
            digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
}

extension UInt8 {
    var asciiLowercased: UInt8 { (0x41...0x5A).contains(self) ? self | 0x20 : self }
}
