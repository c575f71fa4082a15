/// Bytes queued for a writer thread, in blocks that are filled again once written.
///
/// A reader answering a 64 KB chunk of cached-token requests queues megabytes. In one growing
/// buffer every doubling copied it, and freeing it gave the memory back to the kernel (malloc
/// trims the heap), so the next chunk page-faulted it in again: about one fault per request.
/// Here a message goes into the last block when it fits, else into a new one; written blocks
/// come back emptied (``recycle(_:)``) and up to ``spareLimit`` of them are kept for reuse.
struct OutputBlocks {
    /// What a block holds before the next message starts a new one (a bigger message gets a
    /// block of its own).
    static let blockSize = 256 << 10
    /// Emptied blocks kept for reuse: what stays allocated after a burst.
    static let spareLimit = 8

    /// The blocks waiting for the writer, in order; the last one is being filled.
    private(set) var queued: [[UInt8]] = []
    /// Bytes in ``queued``.
    private(set) var byteCount = 0
    private var spare: [[UInt8]] = []

    var isEmpty: Bool { byteCount == 0 }

    /// Appends one message, made of `pieces`, framed.
    mutating func append(_ pieces: some Collection<[UInt8]>, framing: Framing) {
        let size = pieces.reduce(32) { $0 + $1.count }  // 32: room for the frame's header
        let fits = queued.last.map { $0.isEmpty || $0.count + size <= Self.blockSize } ?? false
        if !fits { queued.append(spare.popLast() ?? Self.newBlock()) }
        let before = queued[queued.count - 1].count
        framing.frame(pieces: pieces, into: &queued[queued.count - 1])
        byteCount += queued[queued.count - 1].count - before
    }

    /// Takes every queued block (into `batch`, which must be empty).
    mutating func take(into batch: inout [[UInt8]]) {
        swap(&queued, &batch)
        byteCount = 0
    }

    /// Takes back written blocks, emptied, for reuse (`batch` is left empty); blocks past
    /// ``spareLimit`` and blocks a big message made bigger are freed.
    mutating func recycle(_ batch: inout [[UInt8]]) {
        for index in batch.indices where spare.count < Self.spareLimit && batch[index].capacity <= 2 * Self.blockSize {
            batch[index].removeAll(keepingCapacity: true)
            spare.append(batch[index])
        }
        batch.removeAll(keepingCapacity: true)
    }

    /// Drops everything queued (the reader went away).
    mutating func discardQueued() {
        var dropped: [[UInt8]] = []
        take(into: &dropped)
        recycle(&dropped)
    }

    private static func newBlock() -> [UInt8] {
        var block: [UInt8] = []
        block.reserveCapacity(blockSize)
        return block
    }
}
