#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension POSIX {
    /// How ``writeAll(_:_:to:)`` writes.
    public enum WriteMode: Sendable {
        /// `write(2)`: files, pipes, and sockets whose process ignores SIGPIPE.
        case write
        /// `send(2)` with `MSG_NOSIGNAL`: a socket whose peer may be gone, without SIGPIPE
        /// (`write(2)` when `fd` turns out not to be a socket).
        case socketWithoutSignal
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and `EINTR`: the one write loop.
    ///
    /// - Returns: false when a write fails or writes nothing (the reader is gone, the disk is
    ///   full, ...); `errno` then says why.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>, to mode: WriteMode = .write) -> Bool {
        let written = bytes.withContiguousStorageIfAvailable { writeAll(fd, UnsafeRawBufferPointer($0), to: mode) }
        return written ?? Array(bytes).withUnsafeBytes { writeAll(fd, $0, to: mode) }
    }

    /// Writes all of `buffer` to `fd`, retrying short writes and `EINTR`.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, to mode: WriteMode = .write) -> Bool {
        guard let base = buffer.baseAddress else { return true }
        var offset = 0
        while offset < buffer.count {
            let written: Int
            switch mode {
            case .write: written = write(fd, base + offset, buffer.count - offset)
            case .socketWithoutSignal:
                let sent = send(fd, base + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                written = sent < 0 && errno == ENOTSOCK ? write(fd, base + offset, buffer.count - offset) : sent
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}
