#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Connecting to a running agent's Unix socket (`UserPaths.agentSocket()`), as a client.
///
/// A socket is used only when it is ours: `lstat` says it is a socket (not a symlink)
/// owned by this user, and once connected the peer's uid (`SO_PEERCRED`) is this user's.
/// Anything else at that path is refused, so another user cannot pose as the agent.
enum AgentSocket {
    /// What is at the socket path.
    enum Probe: Equatable {
        /// An agent of this user accepted: the connected descriptor.
        case connected(Int32)
        /// Nothing there, or nothing accepting (a socket left by a killed agent).
        case absent
        /// Something is there that must not be used; why.
        case refused(String)
    }

    static func connect(_ path: String) -> Probe {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .absent }
        guard info.st_mode & S_IFMT == S_IFSOCK else { return .refused("not a socket") }
        guard info.st_uid == getuid() else { return .refused("owned by uid \(info.st_uid)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return .refused("path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .refused("cannot create a socket (errno \(errno))") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let error = errno
            close(fd)
            return error == ECONNREFUSED || error == ENOENT ? .absent : .refused("cannot connect (errno \(error))")
        }
        var peer = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0, peer.uid == getuid() else {
            close(fd)
            return .refused("the process listening there is not this user's")
        }
        return .connected(fd)
    }

    /// Linux's `struct ucred` (not imported: glibc declares it only under `_GNU_SOURCE`).
    private struct PeerCredentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }
}
