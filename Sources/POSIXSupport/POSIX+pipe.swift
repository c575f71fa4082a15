#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension POSIX {
    /// Raises the capacity of the pipe `fd` is an end of to `bytes` (Linux `F_SETPIPE_SZ`),
    /// when it is a pipe and holds less. Best effort: returns the capacity it has afterwards,
    /// or `nil` when `fd` is not a pipe or the capacity cannot be read (other systems too).
    ///
    /// An unprivileged process may go up to `/proc/sys/fs/pipe-max-size` (1 MB by default),
    /// and a user whose pipes hold more than `pipe-user-pages-soft` in all is refused: the
    /// capacity then stays as it was.
    @discardableResult
    public static func enlargePipe(_ fd: Int32, to bytes: Int32) -> Int32? {
        #if os(Linux)
            var status = stat()
            guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFIFO else { return nil }
            let current = fcntl(fd, getPipeSize)
            guard current >= 0 else { return nil }
            guard current < bytes else { return current }
            let raised = fcntl(fd, setPipeSize, bytes)
            return raised >= 0 ? raised : current
        #else
            return nil
        #endif
    }

    /// Whether `count` bytes written to `fd` now cannot block: a pipe holding nothing unread
    /// (its reader took everything) whose capacity takes them, a socket whose send queue is
    /// empty (the peer took everything: an agent's client, or a stdio client on a socket pair)
    /// and whose send buffer takes them, or a regular file. Anything else (a terminal), or a
    /// question the kernel does not answer: `false`.
    public static func canWriteWithoutBlocking(_ fd: Int32, count: Int) -> Bool {
        var status = stat()
        guard fstat(fd, &status) == 0 else { return false }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            return true
        case S_IFIFO:
            #if os(Linux)
                var unread: Int32 = 0
                guard ioctl(fd, UInt(FIONREAD), &unread) == 0, unread == 0 else { return false }
                return count <= Int(fcntl(fd, getPipeSize))
            #else
                return false
            #endif
        case S_IFSOCK:
            #if os(Linux)
                var queued: Int32 = 0
                var buffer: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                guard ioctl(fd, UInt(TIOCOUTQ), &queued) == 0, queued == 0,  // SIOCOUTQ
                    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, &length) == 0
                else { return false }
                return count <= Int(buffer) / 2
            #else
                return false
            #endif
        default:
            return false
        }
    }

    /// Whether reading `fd` now would return at once (data, end of input or an error are
    /// ready): a `poll` that does not wait.
    public static func isReadableNow(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, 0)
            if ready < 0, errno == EINTR { continue }
            return ready != 0  // an error: let the read report it
        }
    }

    /// Linux's `F_SETPIPE_SZ` and `F_GETPIPE_SZ` (`F_LINUX_SPECIFIC_BASE` + 7 and + 8), which
    /// Glibc's module leaves out without `_GNU_SOURCE`.
    private static let setPipeSize: Int32 = 1031
    private static let getPipeSize: Int32 = 1032
}
