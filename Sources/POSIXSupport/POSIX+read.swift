#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension POSIX {
    /// Reads `fd` to its end, retrying `EINTR`.
    ///
    /// Stops early once more than `limit` bytes were read: the result is then longer than
    /// `limit`, which the caller sees as too large.
    /// - Parameter capacity: bytes to reserve first (e.g. the file's size, for one allocation).
    /// - Throws: ``POSIXError`` (`read`).
    public static func readAll(
        _ fd: Int32, limit: Int = .max, reservingCapacity capacity: Int = 0,
        chunkSize: Int = 64 * 1024
    ) throws(POSIXError) -> [UInt8] {
        // Read into the result itself, not through a buffer: the expected size first
        // (`capacity`), then a small read on the stack that most often finds the end. A 64 KB
        // buffer for every file a fresh process reads grew the heap, which free then trimmed.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity)
        var room = capacity
        while bytes.count <= limit {
            let got = room > 0 ? try readAppending(fd, upTo: room, to: &bytes) : try readSmall(fd, appendingTo: &bytes)
            if got == 0 { break }
            room = room > 0 && got < room ? 0 : chunkSize  // a short read: most likely the end
        }
        return bytes
    }

    /// One `read` of at most `count` bytes onto the end of `bytes`; 0 at the end of input.
    private static func readAppending(_ fd: Int32, upTo count: Int, to bytes: inout [UInt8]) throws(POSIXError) -> Int {
        let start = bytes.count
        if bytes.capacity - start < count { bytes.reserveCapacity(max(start + count, 2 * bytes.capacity)) }
        bytes.append(contentsOf: repeatElement(0, count: count))  // Array has no write into spare capacity
        let got = bytes.withUnsafeMutableBytes { retryingInterrupts(read(fd, $0.baseAddress.map { $0 + start }, count)) }
        bytes.removeLast(count - max(got, 0))
        if got < 0 { throw POSIXError("read") }
        return got
    }

    /// One `read` of at most 512 bytes into a buffer on the stack, appended to `bytes`.
    private static func readSmall(_ fd: Int32, appendingTo bytes: inout [UInt8]) throws(POSIXError) -> Int {
        let got = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { buffer in
            let got = retryingInterrupts(read(fd, buffer.baseAddress, buffer.count))
            if got > 0 { bytes.append(contentsOf: buffer[..<got]) }
            return got
        }
        if got < 0 { throw POSIXError("read") }
        return got
    }

    private static func retryingInterrupts(_ call: @autoclosure () -> Int) -> Int {
        while true {
            let result = call()
            if result < 0, errno == EINTR { continue }
            return result
        }
    }

    /// The whole contents of the file at `path` (opened close-on-exec), or `nil` when it
    /// cannot be opened or read, or holds more than `limit` bytes.
    public static func readFile(_ path: String, limit: Int = .max) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        let size = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : 0
        guard let bytes = try? readAll(fd, limit: limit, reservingCapacity: min(size, limit) + 1), bytes.count <= limit else { return nil }
        return bytes
    }
}
