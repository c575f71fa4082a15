import AuthSeams
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Thin wrappers over the socket calls the loopback servers need (the redirect listener;
/// `listenOnLoopback` also for the managed-identity endpoint in `Adapters`). Every descriptor made
/// here is close-on-exec, so a browser we spawn never inherits the listening socket
/// (which would keep the port bound for as long as the browser runs).
public enum LoopbackSockets {
    /// A non-blocking TCP socket listening on 127.0.0.1:`port` (0: any free port).
    /// Returns the descriptor and the bound port.
    public static func listenOnLoopback(port: UInt16, backlog: Int32 = 128) throws(LoopbackError) -> (fd: Int32, port: UInt16) {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(AF_INET, type, 0)
        guard fd >= 0 else { throw .bindFailed("socket: \(POSIX.lastErrorString)") }
        func fail(_ call: String) -> LoopbackError {
            let message = "\(call) 127.0.0.1:\(port): \(POSIX.lastErrorString)"
            close(fd)
            return .bindFailed(message)
        }
        // Lets a fixed port be reused while connections of a previous sign-in linger in
        // TIME_WAIT; on Linux it does not let two sockets listen on the same port.
        var one: Int32 = 1
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw fail("setsockopt")
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian  // 127.0.0.1, never INADDR_ANY
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw fail("bind") }
        guard listen(fd, backlog) == 0 else { throw fail("listen") }
        guard let local = localAddress(of: fd) else { throw fail("getsockname") }
        return (fd, local.port)
    }

    /// The IPv4 address (dotted) and port a socket is bound to.
    static func localAddress(of fd: Int32) -> (host: String, port: UInt16)? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        let host = UInt32(bigEndian: address.sin_addr.s_addr)
        let dotted = "\(host >> 24).\(host >> 16 & 0xFF).\(host >> 8 & 0xFF).\(host & 0xFF)"
        return (dotted, UInt16(bigEndian: address.sin_port))
    }

    /// Accepts one pending connection (non-blocking, close-on-exec), or nil when none.
    static func acceptConnection(_ listener: Int32) -> Int32? {
        while true {
            let fd = accept(listener, nil, nil)
            if fd >= 0 {
                // accept4 is not visible from Swift's Glibc module; the window between
                // accept and FD_CLOEXEC only matters to a fork elsewhere in the process, and
                // our own spawns close every descriptor above 2 anyway.
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                return fd
            }
            if errno == EINTR || errno == ECONNABORTED { continue }
            return nil
        }
    }

    /// A connected pair of non-blocking, close-on-exec UNIX stream sockets (wake-ups).
    static func wakePair() throws(LoopbackError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
            throw .bindFailed("socketpair: \(POSIX.lastErrorString)")
        }
        return (fds[0], fds[1])
    }

    /// Reads what is available; returns the byte count, 0 at end of stream, nil when
    /// nothing is available now, -1 on error.
    static func readAvailable(_ fd: Int32, into buffer: inout [UInt8], max: Int = 8192) -> Int? {
        var chunk = [UInt8](repeating: 0, count: max)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) }
            if count > 0 { buffer.append(contentsOf: chunk[..<count]) }
            if count >= 0 { return count }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? nil : -1
        }
    }

    /// Sends as much of `bytes[offset...]` as possible without blocking and without
    /// SIGPIPE; returns the new offset, or nil on error.
    static func sendAvailable(_ fd: Int32, _ bytes: [UInt8], from offset: Int) -> Int? {
        var offset = offset
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                offset += sent
                continue
            }
            if sent < 0 && errno == EINTR { continue }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return offset }
            return nil
        }
        return offset
    }
}
