#if canImport(Glibc)
import Glibc
#endif
import JSONRPC

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
