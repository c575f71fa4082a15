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
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity)
        // Not zero-filled: 64 KB of memset (and its page faults) for every file a fresh process reads.
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunkSize, 1), alignment: 1)
        defer { chunk.deallocate() }
        while bytes.count <= limit {
            let count = read(fd, chunk.baseAddress, chunk.count)
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw POSIXError("read")
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
        }
        return bytes
    }

    /// The whole contents of the file at `path` (opened close-on-exec), or `nil` when it
    /// cannot be opened or read, or holds more than `limit` bytes.
    public static func readFile(_ path: String, limit: Int = .max) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let bytes = try? readAll(fd, limit: limit), bytes.count <= limit else { return nil }
        return bytes
    }
}
