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
