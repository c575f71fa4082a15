import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The agent's listening socket: in a directory only the user can enter (0700, the user's,
/// not a symbolic link), itself 0600, one agent per path (a lock file held while it runs).
struct AgentSocket {
    let path: String
    let fd: Int32
    private let lockFD: Int32

    /// Prepares the directory, refuses a path someone else could have planted, replaces a
    /// stale socket, binds and listens.
    init(path: String) throws(AgentError) {
        guard path.hasPrefix("/") else { throw AgentError("the socket path must be absolute: \(path)") }
        guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw AgentError("the socket path is too long for a Unix socket (\(path.utf8.count) bytes): \(path)")
        }
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        try Self.prepareDirectory(directory.isEmpty ? "/" : directory)
        let lock = try Self.takeLock(path + ".lock", socket: path)
        let listening: Int32
        do {
            try Self.removeStale(path)
            listening = try Self.listen(at: path)
        } catch {
            // Refused with the lock held: the lock file is ours to remove (see takeLock).
            unlink(path + ".lock")
            close(lock)
            throw error
        }
        self.path = path
        lockFD = lock
        fd = listening
    }

    /// Stops listening and removes the socket and its lock file.
    func remove() {
        close(fd)
        unlink(path)
        unlink(path + ".lock")
        close(lockFD)
    }

    private static func prepareDirectory(_ directory: String) throws(AgentError) {
        if mkdir(directory, 0o700) != 0, errno == ENOENT {
            let parent = String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)])
            if !parent.isEmpty { _ = mkdir(parent, 0o700) }
            _ = mkdir(directory, 0o700)
        }
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            throw AgentError("cannot create the socket directory \(directory): \(POSIX.lastErrorString)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw AgentError("\(directory) is not a directory (a symbolic link or a file); remove it or choose --socket")
        }
        guard info.st_uid == getuid() else {
            throw AgentError("\(directory) belongs to another user; choose --socket in a directory of yours")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw AgentError("\(directory) can be entered by other users; run: chmod 700 \(directory)")
        }
    }

    /// One agent per socket: an exclusive lock on `<socket>.lock`, held while the agent runs
    /// (the kernel releases it when the agent dies, however it dies).
    ///
    /// Only the holder of the lock removes the file (when it stops, or when its start is
    /// refused after taking the lock), and it unlinks the file before it unlocks it; a start
    /// that finds the lock held leaves the file alone (it is the running agent's). A lock won
    /// on a file the path no longer names (unlinked by an agent stopping meanwhile) is dropped
    /// and taken again on the new file, so two agents never both hold "the" lock.
    private static func takeLock(_ lockPath: String, socket: String) throws(AgentError) -> Int32 {
        for _ in 0..<16 {
            let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw AgentError("cannot open \(lockPath): \(POSIX.lastErrorString)") }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                throw AgentError("an agent is already running at \(socket); stop it first (or choose another --socket)")
            }
            if names(lockPath, fd) { return fd }
            close(fd)
        }
        throw AgentError("cannot take the lock \(lockPath): it keeps being replaced")
    }

    /// Whether `path` still names the file open at `fd`.
    private static func names(_ path: String, _ fd: Int32) -> Bool {
        var held = stat()
        var named = stat()
        guard fstat(fd, &held) == 0, lstat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    /// With the lock held, whatever is at the path is a dead agent's socket, or was planted.
    private static func removeStale(_ path: String) throws(AgentError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == getuid() else {
            throw AgentError("\(path) exists and is not a socket of yours; remove it or choose --socket")
        }
        unlink(path)
    }

    private static func listen(at path: String) throws(AgentError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw AgentError("socket(): \(POSIX.lastErrorString)") }
        var address = UnixAddress(path)
        let previous = umask(0o177)
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        umask(previous)
        guard bound == 0, chmod(path, 0o600) == 0, Glibc.listen(fd, 128) == 0 else {
            let reason = POSIX.lastErrorString
            close(fd)
            throw AgentError("cannot listen on \(path): \(reason)")
        }
        return fd
    }
}

/// A `sockaddr_un` for a path (shorter than `sun_path`, checked by the caller).
struct UnixAddress {
    private var storage = sockaddr_un()

    init(_ path: String) {
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
    }

    mutating func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
