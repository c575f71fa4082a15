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
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            bytes = bytes.dropFirst(written)
        }
        return true
    }

    /// One line for the user on stderr, prefixed with the program's name.
    static func say(_ line: String) {
        write("auth-sidecar: \(line)\n", to: STDERR_FILENO)
    }
}
