import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The cross-process lock on `<cache path>.lockfile`, compatible with both flavours of
/// msal-extensions' `CrossPlatLock` (MSAL for Python/.NET apps sharing the cache):
/// with portalocker it `flock`s the file (after waiting up to 5 s for it to be absent),
/// without it the lock is the file's *existence* (`open(..., "x")`). Either way it writes
/// `"{pid} {argv[0]}"` into the file and deletes it on release.
///
/// So this lock is held when this process **created** the file (`O_CREAT | O_EXCL`) **and**
/// holds `flock(LOCK_EX)` on it, and the path still names that inode. Waiting polls every
/// 1-50 ms until the deadline, then fails with ``TokenCacheError/Code/lockTimeout``.
/// On release the file is unlinked *before* the descriptor is closed, so nobody can lock
/// the dying inode and believe they hold the lock.
///
/// The lock file is never opened through a symbolic link (one planted there is refused with
/// a clear error rather than waited on).
///
/// A lock file left by a crashed process is removed when nobody `flock`s it and the pid
/// written in it is no longer alive (or, with no pid in it — a crash between creating and
/// writing it — it is older than half a second: a live writer writes its pid within
/// microseconds); the check itself runs under `flock` so two waiters cannot both remove a
/// fresh lock. A timeout names the process holding the lock, as written in the file.
enum CacheFileLock {
    /// Runs `body` holding the lock on `path`, waiting at most `timeout` for it; the lock
    /// file is deleted and the lock released when `body` returns or throws.
    ///
    /// Blocks the calling thread while another process holds the lock.
    static func withLock<T>(path: String, timeout: Duration, _ body: () throws -> T) throws -> T {
        let fd = try acquire(path: path, timeout: timeout)
        defer {
            unlink(path)
            close(fd)
        }
        return try body()
    }

    private static func acquire(path: String, timeout: Duration) throws(TokenCacheError) -> Int32 {
        try POSIXFile.makeDirectory(forFile: path)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause: UInt32 = 1_000  // microseconds; doubles up to 50 ms
        func wait() throws(TokenCacheError) {
            guard clock.now < deadline else {
                throw .lockTimeout(
                    path,
                    "held by \(holder(of: path)) for more than \(timeout) "
                        + "(if that process is not using the cache, delete the lock file)")
            }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
        while true {
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if fd < 0 {
                guard errno == EEXIST else { throw .writeFailed(path, "create lock file: \(POSIX.lastErrorString)") }
                var info = stat()
                if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK { throw FileSafety.symbolicLink(path) }
                removeIfStale(path)
                try wait()
                continue
            }
            // Created: ours by existence. A portalocker-flavour process that stopped waiting
            // may flock it first; it will delete it when done, and we start again.
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                do throws(TokenCacheError) { try wait() } catch {
                    close(fd)
                    throw error
                }
            }
            if isCurrent(fd, path: path) {
                writeOwner(fd)
                return fd
            }
            close(fd)
        }
    }

    /// Deletes the lock file at `path` if its owner is gone (see the type's documentation).
    private static func removeIfStale(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0, isCurrent(fd, path: path) else { return }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return }
        let stale: Bool
        if let (pid, _) = owner(fd) {
            stale = kill(pid, 0) != 0 && errno == ESRCH
        } else {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let ageNanos =
                (Int64(now.tv_sec) - Int64(info.st_mtim.tv_sec)) * 1_000_000_000
                + Int64(now.tv_nsec) - Int64(info.st_mtim.tv_nsec)
            stale = ageNanos > 500_000_000
        }
        if stale { unlink(path) }
    }

    /// The `"{pid} {program}"` written in the lock file open at `fd`, if it holds one.
    private static func owner(_ fd: Int32) -> (pid: Int32, program: String)? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        let text = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
        let parts = text.split(separator: " ", maxSplits: 1)
        guard let first = parts.first, let pid = Int32(first), pid > 0 else { return nil }
        // Printable ASCII only: the file may have been planted by someone else.
        let program = parts.count > 1 ? String(parts[1].unicodeScalars.filter { (0x21..<0x7F).contains($0.value) }) : ""
        return (pid, String(program.prefix(80)))
    }

    /// Who holds the lock at `path`, for an error message: `process 1234 (python3)`.
    private static func holder(of path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return "another process" }
        defer { close(fd) }
        guard let (pid, program) = owner(fd) else { return "another process (no pid in the lock file)" }
        let name = program.split(separator: "/").last.map(String.init) ?? program
        return "process \(pid)" + (name.isEmpty ? "" : " (\(name))")
    }

    /// Whether `fd` is still the file at `path` (not unlinked or replaced meanwhile).
    private static func isCurrent(_ fd: Int32, path: String) -> Bool {
        var held = stat()
        var named = stat()
        guard fstat(fd, &held) == 0, lstat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    private static func writeOwner(_ fd: Int32) {
        let program = CommandLine.arguments.first ?? ""
        _ = POSIX.writeAll(fd, Array("\(getpid()) \(program)".utf8))
    }
}
