import Testing

@testable import JSONRPC

/// The writer's queue: messages come out whole and in order, blocks are reused.
@Suite struct OutputBlocksTests {
    private func message(_ index: Int, size: Int) -> [UInt8] {
        let text = Array("{\"id\":\(index),\"pad\":\"".utf8)
        return text + [UInt8](repeating: UInt8(ascii: "x"), count: max(0, size - text.count - 2)) + Array("\"}".utf8)
    }

    @Test(arguments: [Framing.ndjson, .lsp])
    func messagesComeOutInOrderAndWhole(framing: Framing) {
        var blocks = OutputBlocks()
        var expected: [UInt8] = []
        for index in 0..<300 {
            // mostly token-reply sized, one bigger than a block
            let body = message(index, size: index == 150 ? OutputBlocks.blockSize + 1000 : 3500)
            blocks.append([Array(body[..<10]), Array(body[10...])], framing: framing)
            framing.frame(body, into: &expected)
        }
        #expect(blocks.byteCount == expected.count)
        var batch: [[UInt8]] = []
        blocks.take(into: &batch)
        #expect(blocks.isEmpty)
        #expect(Array(batch.joined()) == expected)
        // a block holds at most blockSize, unless one message is bigger
        #expect(batch.filter { $0.count > OutputBlocks.blockSize }.count == 1)
        #expect(batch.count > 4)
    }

    /// Written blocks are filled again: the second burst allocates nothing new.
    @Test func blocksAreReusedAfterTheyAreWritten() {
        var blocks = OutputBlocks()
        func burst() -> Set<UnsafeRawPointer?> {
            for index in 0..<500 { blocks.append([message(index, size: 3500)], framing: .ndjson) }
            var batch: [[UInt8]] = []
            blocks.take(into: &batch)
            let storage = Set(batch.map { block in block.withUnsafeBytes { UnsafeRawPointer($0.baseAddress) } })
            #expect(batch.count == 7)  // 1.75 MB in 256 KB blocks
            blocks.recycle(&batch)
            #expect(batch.isEmpty)
            return storage
        }
        let first = burst()
        let second = burst()
        #expect(first.count == 7)
        #expect(second == first)
    }

    @Test func aFailedWriteDropsWhatIsQueued() {
        var blocks = OutputBlocks()
        blocks.append([message(1, size: 100)], framing: .ndjson)
        blocks.discardQueued()
        #expect(blocks.isEmpty)
        var batch: [[UInt8]] = []
        blocks.take(into: &batch)
        #expect(batch.isEmpty)
    }
}
