#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension POSIX {
    /// Writes all of `bytes` to `fd`, retrying short writes and `EINTR`.
    ///
    /// - Returns: false when a write fails or writes nothing (the reader is gone, the disk is
    ///   full, ...); `errno` then says why.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) -> Bool {
        let written = bytes.withContiguousStorageIfAvailable { writeAll(fd, UnsafeRawBufferPointer($0)) }
        return written ?? Array(bytes).withUnsafeBytes { writeAll(fd, $0) }
    }

    /// Writes all of `buffer` to `fd`, retrying short writes and `EINTR`.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        guard let base = buffer.baseAddress else { return true }
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, base + offset, buffer.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}
