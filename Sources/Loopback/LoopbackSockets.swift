import AuthSeams
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Thin wrappers over the socket calls the loopback servers need (`LoopbackHTTPServer`,
/// `AcceptLoop`). Every descriptor made
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

    /// A connected pair of non-blocking, close-on-exec UNIX stream sockets (wake-ups).
    static func wakePair() throws(LoopbackError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
            throw .bindFailed("socketpair: \(POSIX.lastErrorString)")
        }
        return (fds[0], fds[1])
    }
}
