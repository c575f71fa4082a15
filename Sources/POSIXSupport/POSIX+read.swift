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
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw POSIXError("read")
            }
            bytes.append(contentsOf: chunk[0..<count])
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
