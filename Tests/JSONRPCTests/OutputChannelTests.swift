import POSIXSupport
import Testing

@testable import JSONRPC

#if canImport(Glibc)
    import Glibc
#endif

/// The writer thread over a real pipe: replies arrive whole and in order, and a pipelining
/// client gets a bigger pipe.
@Suite struct OutputChannelTests {
    /// Sends `count` messages of `size` bytes through a channel on a fresh pipe, reads them
    /// all at the other end; returns what was read and the pipe's capacity afterwards.
    private func roundTrip(count: Int, size: Int) throws -> (read: [UInt8], expected: [UInt8], capacity: Int32) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let channel = OutputChannel(fd: ends[1], framing: .ndjson)
        var expected: [UInt8] = []
        for index in 0..<count {
            let body = Array("{\"id\":\(index),\"pad\":\"\(String(repeating: "x", count: size))\"}".utf8)
            Framing.ndjson.frame(body, into: &expected)
            channel.send(serialized: [body], deferringWake: index % 100 != 99)
        }
        channel.flush()
        let reader = ends[0]
        var read: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while read.count < expected.count {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, $0.count) }
            try #require(count > 0)
            read += chunk[..<count]
        }
        let capacity = fcntl(reader, 1032)  // F_GETPIPE_SZ
        channel.close()
        close(ends[1])
        return (read, expected, capacity)
    }

    @Test func pipelinedRepliesArriveInOrderAndEnlargeThePipe() throws {
        let result = try roundTrip(count: 2000, size: 3500)
        #expect(result.read == result.expected)
        #expect(result.capacity == OutputChannel.pipeCapacity)
    }

    @Test func aFewRepliesLeaveThePipeAsItIs() throws {
        let result = try roundTrip(count: 3, size: 100)
        #expect(result.read == result.expected)
        #expect(result.capacity == 64 << 10)
    }
}

/// Who writes: the reader itself when that cannot block, else the writer thread, never both at once.
@Suite struct OutputChannelWriterTests {
    private func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        return (ends[0], ends[1])
    }

    /// Reads `count` bytes from `fd` (blocking).
    private func read(_ fd: Int32, count: Int) throws -> [UInt8] {
        var read: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while read.count < count {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min($0.count, count - read.count)) }
            try #require(got > 0)
            read += chunk[..<got]
        }
        return read
    }

    private func line(_ text: String) -> [UInt8] { Array((text + "\n").utf8) }

    @Test func onlyAnEmptiedPipeOrSocketWithRoomOrAFileTakesAWriteWithoutBlocking() throws {
        let ends = try makePipe()
        defer {
            close(ends.read)
            close(ends.write)
        }
        #expect(POSIX.canWriteWithoutBlocking(ends.write, count: 64 << 10))
        #expect(!POSIX.canWriteWithoutBlocking(ends.write, count: (64 << 10) + 1))  // more than the pipe holds
        #expect(POSIX.writeAll(ends.write, line("unread")))
        #expect(!POSIX.canWriteWithoutBlocking(ends.write, count: 1))
        _ = try read(ends.read, count: 7)
        #expect(POSIX.canWriteWithoutBlocking(ends.write, count: 1))

        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        // A socket whose peer took everything (an agent's client), within half its send buffer.
        #expect(POSIX.canWriteWithoutBlocking(pair[0], count: 1))
        #expect(!POSIX.canWriteWithoutBlocking(pair[0], count: 64 << 20))
        #expect(POSIX.writeAll(pair[0], line("unread")))
        #expect(!POSIX.canWriteWithoutBlocking(pair[0], count: 1))
        _ = try read(pair[1], count: 7)
        #expect(POSIX.canWriteWithoutBlocking(pair[0], count: 1))
        close(pair[0])
        close(pair[1])

        var template = Array("/tmp/output-channel-XXXXXX".utf8CString)
        let file = template.withUnsafeMutableBufferPointer { $0.baseAddress.map { mkstemp($0) } ?? -1 }
        try #require(file >= 0)
        template.withUnsafeBufferPointer { _ = $0.baseAddress.map { unlink($0) } }
        #expect(POSIX.canWriteWithoutBlocking(file, count: 1 << 20))
        close(file)
        #expect(!POSIX.canWriteWithoutBlocking(file, count: 1))  // closed
    }

    @Test func aReaderFlushToAnEmptyPipeWritesItselfWithoutAThread() throws {
        let ends = try makePipe()
        defer { close(ends.read) }
        let channel = OutputChannel(fd: ends.write, framing: .ndjson)
        channel.send(serialized: [Array(#"{"id":1}"#.utf8)], deferringWake: true)
        channel.send(serialized: [Array(#"{"id":2}"#.utf8)], deferringWake: true)
        channel.flush()
        // Already in the pipe when flush returns: written by this thread.
        var unread: Int32 = 0
        #expect(ioctl(ends.read, UInt(FIONREAD), &unread) == 0)
        #expect(Int(unread) == line(#"{"id":1}"#).count * 2)
        #expect(!channel.writerStarted)
        #expect(try read(ends.read, count: Int(unread)) == line(#"{"id":1}"#) + line(#"{"id":2}"#))
        channel.close()
        close(ends.write)
    }

    @Test func aPipeTheClientHasNotEmptiedIsLeftToTheWriterThread() throws {
        let ends = try makePipe()
        defer { close(ends.read) }
        #expect(POSIX.writeAll(ends.write, line("earlier")))
        let channel = OutputChannel(fd: ends.write, framing: .ndjson)
        channel.send(serialized: [Array("later".utf8)], deferringWake: true)
        channel.flush()  // a write here could block the reader on a client that does not read
        #expect(channel.writerStarted)
        #expect(try read(ends.read, count: 14) == line("earlier") + line("later"))
        channel.close()
        close(ends.write)
    }

    @Test func aSendFromAnotherThreadStartsTheWriterAndCloseWritesWhatIsLeft() throws {
        let ends = try makePipe()
        defer { close(ends.read) }
        let channel = OutputChannel(fd: ends.write, framing: .ndjson)
        channel.send(serialized: [Array("queued".utf8)], deferringWake: true)
        channel.close()  // never flushed: close writes it
        #expect(!channel.writerStarted)
        #expect(try read(ends.read, count: 7) == line("queued"))
        close(ends.write)

        let other = try makePipe()
        defer { close(other.read) }
        let threaded = OutputChannel(fd: other.write, framing: .ndjson)
        threaded.send(serialized: [Array("from a task".utf8)])
        #expect(threaded.writerStarted)
        #expect(try read(other.read, count: 12) == line("from a task"))
        threaded.close()
        close(other.write)
    }

    /// Senders on four threads and a flushing reader at once: every message arrives once, whole.
    @Test func everyMessageArrivesOnceWholeWithTheWriterAndAFlushingReaderAtOnce() async throws {
        let ends = try makePipe()
        let channel = OutputChannel(fd: ends.write, framing: .ndjson)
        let perSender = 400
        let pad = String(repeating: "x", count: 3000)  // batches over PIPE_BUF: written in pieces
        let drained = Task.detached { [reader = ends.read] () -> [UInt8] in
            var all: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let got = chunk.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, $0.count) }
                if got <= 0 { return all }
                all += chunk[..<got]
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<4 {
                group.addTask {
                    for index in 0..<perSender { channel.send(serialized: [Array("t\(sender)-\(index)-\(pad)".utf8)]) }
                }
            }
            group.addTask {
                for index in 0..<perSender {
                    channel.send(serialized: [Array("r-\(index)-\(pad)".utf8)], deferringWake: true)
                    if index % 5 == 4 { channel.flush() }
                }
                channel.flush()
            }
        }
        channel.close()
        close(ends.write)
        let lines = String(decoding: await drained.value, as: UTF8.self).split(separator: "\n")
        close(ends.read)
        #expect(lines.count == 5 * perSender)
        #expect(lines.allSatisfy { $0.hasSuffix("-" + pad) && $0.split(separator: "-").count == 3 })
        #expect(Set(lines).count == 5 * perSender)
    }
}
