import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The stdio mode forwarding to an agent: bytes from stdin to the socket and back to
/// stdout, unchanged (the agent detects the framing), after an optional
/// ``StartupPreamble`` carrying the command line's configuration.
public enum AgentRelay {
    /// Relays until the agent closes the connection; returns the exit status.
    public static func run(socket fd: Int32, input: Int32, output: Int32, preamble: [UInt8]?) -> Int32 {
        if let preamble, !POSIX.writeAll(fd, preamble) { return 1 }
        do {
            try POSIX.startThread {
                copy(from: input, to: fd)
                shutdown(fd, Int32(SHUT_WR))
            }
        } catch {
            return 1
        }
        copy(from: fd, to: output)
        return 0
    }

    private static func copy(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0, POSIX.writeAll(destination, Array(buffer[..<count])) else { return }
        }
    }
}
