#if canImport(Glibc)
    import Glibc
#endif

/// Why an adapter cannot start.
public struct AdapterError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// An HTTP/1.1 request head: method, target, headers (names lower-cased).
struct HTTPHead {
    static let limit = 16 * 1024

    let method: String
    let target: String
    let headers: [String: String]

    /// Reads a head within 5 seconds; `nil` for anything else.
    static func read(from fd: Int32) -> HTTPHead? {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= limit {
            if let end = bytes.firstRange(of: [13, 10, 13, 10]) { return parse(Array(bytes[..<end.lowerBound])) }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            bytes += chunk[..<count]
        }
        return nil
    }

    static func parse(_ head: [UInt8]) -> HTTPHead? {
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let request = lines.first?.split(separator: " ") ?? []
        guard request.count == 3, request[2].hasPrefix("HTTP/1.") else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingPrefix(" ").description
        }
        return HTTPHead(method: String(request[0]), target: String(request[1]), headers: headers)
    }
}
