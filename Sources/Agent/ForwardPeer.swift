#if canImport(Glibc)
    import Glibc
#endif

/// Who is behind a forward-socket connection, as the laptop can tell: the connecting
/// process's command line (`ssh -R ... user@host` for SSH forwarding, the container's
/// process for a bind mount), for the approval question, the log and `status`.
struct ForwardPeer: Sendable {
    let pid: Int32
    /// The command line, arguments joined by spaces, at most 200 characters.
    let command: String
    /// When the connection was accepted (seconds since the epoch).
    let since: Int64

    init(pid: Int32) {
        self.pid = pid
        since = Int64(time(nil))
        var bytes = [UInt8](repeating: 0, count: 4096)
        let fd = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        var count = 0
        if fd >= 0 {
            count = max(0, read(fd, &bytes, bytes.count))
            close(fd)
        }
        let words = bytes[..<count].split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        let text = words.joined(separator: " ")
        command = text.isEmpty ? "pid \(pid)" : String(text.prefix(200))
    }

    /// Whether process `pid` is an ssh client (`/proc/PID/comm` is `ssh`): on the main socket,
    /// someone forwarded it instead of the forward socket.
    static func isSSH(_ pid: Int32) -> Bool {
        var name = [UInt8](repeating: 0, count: 16)
        let fd = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        let count = read(fd, &name, name.count)
        close(fd)
        return count == 4 && name[..<4] == Array("ssh\n".utf8)[...]
    }

    /// `"<command> (pid N)"`.
    var description: String { "\(command) (pid \(pid))" }
}

/// Seconds since the epoch as `2026-11-25T23:41:02Z`.
func utcTimestamp(_ seconds: Int64) -> String {
    var value = time_t(seconds)
    var parts = tm()
    gmtime_r(&value, &parts)
    var buffer = [CChar](repeating: 0, count: 32)
    let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
    return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
