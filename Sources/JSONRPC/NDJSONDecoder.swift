/// Newline-delimited JSON: each line is a message; blank lines are skipped, a trailing `\r`
/// is dropped, and a line over the size limit is reported once and skipped to its newline.
struct NDJSONDecoder: Sendable {
    let maxMessageSize: Int
    private var pending: [UInt8] = []
    private var discarding = false

    init(maxMessageSize: Int) { self.maxMessageSize = maxMessageSize }

    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ emit: (FrameEvent) -> Void) {
        var start = 0
        while start < chunk.count {
            guard let newline = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                append(UnsafeRawBufferPointer(rebasing: chunk[start...]), emit)
                return
            }
            let piece = UnsafeRawBufferPointer(rebasing: chunk[start..<newline])
            if pending.isEmpty, !discarding {
                if piece.count > maxMessageSize + 1 {  // +1: a CR before the newline
                    emit(.error(.messageTooLarge(limit: maxMessageSize)))
                } else {
                    emitLine(piece, emit)
                }
            } else {
                append(piece, emit)
                if !discarding { pending.withUnsafeBytes { emitLine($0, emit) } }
                pending.removeAll(keepingCapacity: pending.capacity <= 1 << 16)
                discarding = false
            }
            start = newline + 1
        }
    }

    mutating func finish(_ emit: (FrameEvent) -> Void) {
        if !discarding, !pending.isEmpty { pending.withUnsafeBytes { emitLine($0, emit) } }
        pending = []
        discarding = false
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer, _ emit: (FrameEvent) -> Void) {
        guard !discarding else { return }
        if pending.count + bytes.count > maxMessageSize + 1 {
            emit(.error(.messageTooLarge(limit: maxMessageSize)))
            pending.removeAll()
            discarding = true
        } else {
            pending.append(contentsOf: bytes)
        }
    }

    private func emitLine(_ line: UnsafeRawBufferPointer, _ emit: (FrameEvent) -> Void) {
        var end = line.count
        if end > 0, line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let body = line[..<end]
        guard body.contains(where: { !$0.isJSONWhitespace }) else { return }
        if body.count > maxMessageSize {
            emit(.error(.messageTooLarge(limit: maxMessageSize)))
        } else {
            emit(.message(Array(body)))
        }
    }
}
