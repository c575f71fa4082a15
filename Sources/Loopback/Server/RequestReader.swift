import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Reads one HTTP/1.1 request from a blocking connection, whole, before a deadline counted
/// from accept: a client that sends one byte every few seconds is cut off when the deadline
/// passes, however often it sends.
enum RequestReader {
    /// What reading ended with.
    enum Outcome: Equatable {
        case request(HTTPServerRequest)
        /// Malformed or too large: answer with this status and close.
        case invalid(HTTPStatus)
        /// The deadline passed first (408).
        case timedOut
        /// The peer went away before sending anything (or was evicted): answer nothing.
        case closed
    }

    /// Reads until the parser has a whole request or `deadline` (monotonic milliseconds).
    static func read(from fd: Int32, deadline: Int64, maxBody: Int) -> Outcome {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            switch HTTPRequestParser.parse(buffer, maxBody: maxBody) {
            case .complete(let request): return .request(request)
            case .invalid(let status): return .invalid(status)
            case .incomplete: break
            }
            let remaining = deadline - POSIX.monotonicMilliseconds()
            guard remaining > 0 else { return .timedOut }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: remaining))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return ready == 0 ? .timedOut : .closed }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            // A client that stopped sending half-way (shut down its side) is told why.
            guard count > 0 else { return count == 0 && !buffer.isEmpty ? .invalid(.badRequest) : .closed }
            buffer += chunk[..<count]
        }
    }
}
