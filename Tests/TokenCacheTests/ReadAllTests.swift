import POSIXSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `POSIX.readAll` and `POSIX.readFile` read into the result itself: whatever size was
/// expected, the whole input comes back, and `limit` still stops a large one.
@Suite struct ReadAllTests {
    private static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    private func writeFile(_ bytes: [UInt8], in directory: TemporaryDirectory) throws -> String {
        let path = directory.path + "/data"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        #expect(POSIX.writeAll(fd, bytes))
        close(fd)
        return path
    }

    @Test(arguments: [0, 1, 511, 512, 513, 5309, 70_000])
    func aFileComesBackWholeWhateverSizeWasExpected(size: Int) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let bytes = Self.pattern(size)
        let path = try writeFile(bytes, in: directory)
        #expect(POSIX.readFile(path) == bytes)
        for expected in [0, 1, size / 2, size + 1, size * 2 + 10] {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            try #require(fd >= 0)
            #expect(try POSIX.readAll(fd, reservingCapacity: expected, chunkSize: 4096) == bytes)
            close(fd)
        }
    }

    @Test func aPipeWrittenInPiecesComesBackWhole() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }  // kept from children other tests spawn
        let bytes = Self.pattern(300_000)  // more than the pipe holds: the writer waits for the reader
        let writer = ends[1]
        try POSIX.startThread {
            var offset = 0
            while offset < bytes.count {
                let piece = min(7_000, bytes.count - offset)
                _ = bytes[offset..<(offset + piece)].withUnsafeBytes { POSIX.writeAll(writer, Array($0)) }
                offset += piece
            }
            close(writer)
        }
        #expect(try POSIX.readAll(ends[0]) == bytes)
        close(ends[0])
    }

    @Test func aFileOverTheLimitIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try writeFile(Self.pattern(10_000), in: directory)
        #expect(POSIX.readFile(path, limit: 9_999) == nil)
        #expect(POSIX.readFile(path, limit: 10_000)?.count == 10_000)
        #expect(POSIX.readFile(directory.path + "/missing") == nil)
    }

    @Test func aFileWhoseSizeTheKernelDoesNotKnowIsReadToItsEnd() throws {
        let status = try #require(POSIX.readFile("/proc/self/status"))  // st_size 0
        #expect(String(decoding: status, as: UTF8.self).contains("Pid:"))
    }
}
