#if canImport(Glibc)
import Glibc
#endif
import JSONRPC

/// Connecting to a running agent, only if the socket is the user's own: its directory the
/// user's and closed to others, the socket the user's. Anything else is treated as no agent
/// (a socket planted by someone else would see every request).
public enum AgentConnection {
    /// A connected descriptor, or `nil` when no agent of the user's answers at `path`.
    public static func connect(to path: String) -> Int32? {
        guard isTrusted(path) else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = UnixAddress(path)
        guard address.withSockaddr({ Glibc.connect(fd, $0, $1) }) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Whether the socket and its directory are the user's and closed to others.
    static func isTrusted(_ path: String) -> Bool {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        var info = stat()
        guard lstat(directory.isEmpty ? "/" : directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
              info.st_uid == getuid(), info.st_mode & 0o077 == 0,
              lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == getuid()
        else { return false }
        return true
    }
}

/// The stdio mode forwarding to an agent: bytes from stdin to the socket and back to
/// stdout, unchanged (the agent detects the framing), after an optional
/// ``StartupPreamble`` carrying the command line's configuration.
public enum AgentRelay {
    /// Relays until the agent closes the connection; returns the exit status.
    public static func run(socket fd: Int32, input: Int32, output: Int32, preamble: [UInt8]?) -> Int32 {
        if let preamble, !writeAll(fd, preamble) { return 1 }
        let reader = startThread { copy(from: input, to: fd); shutdown(fd, Int32(SHUT_WR)) }
        guard reader else { return 1 }
        copy(from: fd, to: output)
        return 0
    }

    private static func copy(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0, writeAll(destination, Array(buffer[..<count])) else { return }
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}
