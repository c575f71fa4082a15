#if canImport(Glibc)
    import Glibc
#endif

/// Who is at the other end of a Unix socket (`SO_PEERCRED`).
public struct PeerCredentials: Sendable, Equatable {
    public let pid: Int32
    public let uid: UInt32

    /// The peer of connected socket `fd`; `nil` when the kernel cannot say.
    public init?(socket fd: Int32) {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc hides it behind _GNU_SOURCE).
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
            length == socklen_t(MemoryLayout.size(ofValue: credentials))
        else { return nil }
        pid = credentials.0
        uid = credentials.1
    }
}
