import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a verb writes: its output on the reserved stdout, messages for the user on stderr.
enum Console {
    /// Writes `text` whole to `fd` (retrying short writes); false when the reader is gone.
    @discardableResult
    static func write(_ text: String, to fd: Int32) -> Bool {
        POSIX.writeAll(fd, Array(text.utf8))
    }

    /// Reads `fd` (stdin) until end of input, a blank line (the end of a git credential
    /// description), or more than `limit` bytes: the caller sees an oversized input as such.
    static func readInput(from fd: Int32 = STDIN_FILENO, limit: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= limit, !endsWithBlankLine(bytes) {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return bytes
    }

    /// Whether `bytes` hold an empty line (LF or CR LF ended).
    private static func endsWithBlankLine(_ bytes: [UInt8]) -> Bool {
        bytes.first == 10 || bytes.starts(with: [13, 10]) || bytes.firstRange(of: [10, 10]) != nil || bytes.firstRange(of: [10, 13, 10]) != nil
    }

    /// One line for the user on stderr, prefixed with the program's name.
    static func say(_ line: String) {
        write("auth-sidecar: \(line)\n", to: STDERR_FILENO)
    }
}
