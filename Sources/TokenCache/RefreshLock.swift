import Crypto

#if canImport(Glibc)
    import Glibc
#endif

/// Makes processes sharing a cache take turns on the same refresh: one redeems the refresh
/// token, the others wait and then find the new token in the cache (no refresh storms, no
/// rotated refresh token used twice).
public protocol RefreshLock: Sendable {
    /// Runs `body` holding the lock for `key`. Waits at most `timeout` for another holder;
    /// then runs `body` anyway (a stuck holder delays the others, never blocks them).
    func withLock<T: Sendable>(key: String, timeout: Duration, _ body: () async throws -> T) async throws -> T
}

/// No lock: for a cache nobody else shares (memory).
public struct NoRefreshLock: RefreshLock {
    public init() {}

    public func withLock<T: Sendable>(key: String, timeout: Duration, _ body: () async throws -> T) async throws -> T {
        try await body()
    }
}

/// The refresh lock between processes: one byte of the file `path` per key (the key's
/// SHA-256 picks the byte), locked with an open-file-description record lock.
///
/// The file stays empty and is never deleted, so there is nothing to clean up; the kernel
/// drops a lock when its holder exits, so a crashed holder blocks nobody. Waiting polls
/// (5-50 ms, on the task, not a thread). Two keys sharing a byte only take turns.
/// The file is created 0600 and opened without following a symlink.
public final class FileRefreshLock: RefreshLock {
    /// The lock file, e.g. `<cache>.refresh.lock`.
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public func withLock<T: Sendable>(key: String, timeout: Duration, _ body: () async throws -> T) async throws -> T {
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        // A first start: the cache's directory is not there yet (processes starting at once
        // would otherwise each refresh alone).
        if fd < 0, errno == ENOENT, (try? POSIXFile.makeDirectory(forFile: path)) != nil {
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        }
        guard fd >= 0 else { return try await body() }  // no lock to be had: refresh alone
        defer { close(fd) }  // closing the description releases its lock
        var region = Self.region(for: key)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause = Duration.milliseconds(5)
        while fcntl(fd, Self.setLock, &region) != 0 {
            guard errno == EAGAIN || errno == EACCES || errno == EINTR, clock.now < deadline else { break }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(50))
        }
        return try await body()
    }

    /// `F_OFD_SETLK` (Linux): a record lock owned by the open file description, so two tasks
    /// of one process exclude each other too, and closing another descriptor keeps it.
    private static let setLock: Int32 = 37

    static func region(for key: String) -> flock {
        let digest = Array(SHA256.hash(data: Array(key.utf8)))
        let offset = digest.prefix(4).reduce(0) { $0 << 8 | Int64($1) }
        var region = flock()
        region.l_type = Int16(F_WRLCK)
        region.l_whence = Int16(SEEK_SET)
        region.l_start = off_t(offset)
        region.l_len = 1
        region.l_pid = 0  // required for OFD locks
        return region
    }
}
