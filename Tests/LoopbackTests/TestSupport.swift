import POSIXSupport

@testable import Loopback

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 client over a real socket. Non-blocking reads with short sleeps, so
/// it never holds a cooperative thread while the listener's thread works.
struct TestHTTPClient {
    struct Response {
        var status: Int
        var head: String
        var body: String
    }

    enum Failure: Error {
        case connect(Int32)
        case send, timeout, malformed
    }

    /// Sends raw bytes to 127.0.0.1:`port` and reads until the server closes.
    /// `timeout` bounds a wait for a reply that should come at once; generous, because the suite
    /// runs its tests in parallel on loaded machines (5 s timed out under a load of 6 on 2 cores).
    static func raw(port: UInt16, _ request: String, timeout: Duration = .seconds(20)) async throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure.connect(errno) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        guard LoopbackSockets.sendAvailable(fd, Array(request.utf8), from: 0) == request.utf8.count else { throw Failure.send }
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        while true {
            switch LoopbackSockets.readAvailable(fd, into: &received) {
            case .some(0): return String(decoding: received, as: UTF8.self)
            case .some(-1): return String(decoding: received, as: UTF8.self)  // reset after the reply
            case .some: continue
            case .none:
                guard ContinuousClock.now < deadline else { throw Failure.timeout }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    /// Sends one request (Host: localhost:port unless `host` is given) and parses the reply.
    static func send(
        port: UInt16, method: String = "GET", target: String, host: String? = nil,
        headers: [String] = [], body: String = ""
    ) async throws -> Response {
        var request = "\(method) \(target) HTTP/1.1\r\nHost: \(host ?? "localhost:\(port)")\r\n"
        for header in headers { request += header + "\r\n" }
        if !body.isEmpty || method == "POST" { request += "Content-Length: \(body.utf8.count)\r\n" }
        request += "\r\n" + body
        let text = try await raw(port: port, request)
        guard let split = text.firstRange(of: "\r\n\r\n") else { throw Failure.malformed }
        let head = String(text[..<split.lowerBound])
        let statusLine = head.prefix { $0 != "\r" }.split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.malformed }
        return Response(status: status, head: head, body: String(text[split.upperBound...]))
    }
}

/// Files and processes for the tests.
enum TestFiles {
    /// A new private temporary directory.
    static func makeDirectory() -> String {
        var template = Array("/tmp/loopback-tests-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, mkdtemp(base) != nil else { return "/tmp" }
            return String(cString: base)
        }
    }

    static func write(_ text: String, to path: String, mode: mode_t = 0o644) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        guard fd >= 0 else { return }
        _ = POSIX.writeAll(fd, Array(text.utf8))
        close(fd)
        chmod(path, mode)
    }

    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 4096) }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Waits until `path` exists (a script wrote it), up to `timeout`.
    static func waitForFile(_ path: String, timeout: Duration = .seconds(5)) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if access(path, F_OK) == 0 {
                try? await Task.sleep(for: .milliseconds(50))  // let the writer finish
                return read(path)
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}

/// Socket facts for the tests.
enum TestSockets {
    /// Opens `count` connections to 127.0.0.1:`port` that never send anything (a slow-loris);
    /// non-blocking, so a full accept queue cannot stall the test. The caller closes them.
    static func idleConnections(port: UInt16, count: Int) -> [Int32] {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return (0..<count).map { _ in
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            return fd
        }
    }

    /// How many of `fds` the peer has closed (a read returns end of file or a reset).
    static func closedByPeer(_ fds: [Int32]) -> Int {
        fds.filter { fd in
            var byte: UInt8 = 0
            let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
            return count == 0 || (count < 0 && errno == ECONNRESET)
        }.count
    }

    /// Binds 127.0.0.1:`port` without SO_REUSEADDR and closes; true when the port was free.
    static func canBind(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return result == 0 && listen(fd, 1) == 0
    }

    /// A port that was free a moment ago.
    static func freePort() -> UInt16 {
        guard let (fd, port) = try? LoopbackSockets.listenOnLoopback(port: 0) else { return 0 }
        close(fd)
        return port
    }

    /// The local addresses (hex `ADDR:PORT` as in /proc/net/tcp) listening on `port`,
    /// from /proc/net/tcp and /proc/net/tcp6.
    static func listeningAddresses(port: UInt16) -> [String] {
        listeningSockets(port: port).map(\.address)
    }

    /// The listening sockets on `port`: local address (hex, as in /proc/net/tcp) and inode.
    static func listeningSockets(port: UInt16) -> [(address: String, inode: String)] {
        let portHex = String(port, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: 4 - portHex.count) + portHex
        var found: [(address: String, inode: String)] = []
        for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
            for line in (TestFiles.read(file) ?? "").split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[1].hasSuffix(":" + padded), fields[3] == "0A" else { continue }
                found.append((String(fields[1]), String(fields[9])))
            }
        }
        return found
    }

    /// Whether none of the listening sockets `inodes` is on `port` any more, waiting up to
    /// `seconds` for it. A closed socket can outlive its close for a moment: a child that a
    /// parallel test spawns (posix_spawn's clone copies the descriptor table) holds a copy
    /// until its exec drops the close-on-exec descriptors, which takes long on a loaded machine.
    static func gone(_ inodes: Set<String>, port: UInt16, seconds: Double = 5) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while listeningSockets(port: port).contains(where: { inodes.contains($0.inode) }) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}

/// Non-blocking reads and writes for the test clients.
extension LoopbackSockets {
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
