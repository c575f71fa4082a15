import JSONRPC
import Loopback
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Connecting to a running agent, only if it is the user's own: its directory the user's and
/// closed to others, the path a socket (not a symbolic link) of the user's, and the process
/// accepting there the user's (`SO_PEERCRED`). Anything else is never used: a socket planted
/// by someone else would see every request.
public enum AgentConnection {
    /// What is at the socket path.
    public enum Probe: Equatable, Sendable {
        /// An agent of this user accepted: the connected descriptor.
        case connected(Int32)
        /// Nothing there, or nothing accepting (a socket left by a killed agent).
        case absent
        /// Something is there that must not be used; why.
        case refused(String)
    }

    /// `AUTH_SIDECAR_NO_AGENT` set (not empty, not `0`): this process stays standalone.
    public static var disabledByEnvironment: Bool {
        guard let value = getenv("AUTH_SIDECAR_NO_AGENT").map({ String(cString: $0) }) else { return false }
        return !value.isEmpty && value != "0"
    }

    /// A connected descriptor, or `nil` when no agent of the user's answers at `path`.
    public static func connect(to path: String) -> Int32? {
        if case .connected(let fd) = probe(path) { return fd }
        return nil
    }

    /// The one stderr line of a process that found a socket not the user's own at `path`
    /// (found, not named: it then runs standalone; clients say the same).
    public static func ignoredSocketLine(_ path: String, _ reason: String) -> String {
        "ignoring the agent socket \(path): \(reason); running without the agent"
    }

    /// Looks at `path` and connects when it is safe.
    public static func probe(_ path: String) -> Probe {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .absent }
        guard info.st_mode & S_IFMT == S_IFSOCK else { return .refused("not a socket") }
        guard info.st_uid == getuid() else { return .refused("owned by uid \(info.st_uid)") }
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        guard lstat(directory.isEmpty ? "/" : directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
            info.st_uid == getuid(), info.st_mode & 0o077 == 0
        else { return .refused("its directory is not the user's alone (chmod 700 \(directory))") }
        guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return .refused("path too long") }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .refused("cannot create a socket (errno \(errno))") }
        var address = UnixAddress(path)
        guard address.withSockaddr({ Glibc.connect(fd, $0, $1) }) == 0 else {
            let error = errno
            close(fd)
            return error == ECONNREFUSED || error == ENOENT ? .absent : .refused("cannot connect (errno \(error))")
        }
        guard PeerCredentials(socket: fd)?.uid == getuid() else {
            close(fd)
            return .refused("the process listening there is not this user's")
        }
        return .connected(fd)
    }
}
