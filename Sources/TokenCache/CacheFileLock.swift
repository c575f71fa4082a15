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
/// A lock file left by a crashed process is removed when nobody `flock`s it and the pid
/// written in it is no longer alive (or, with no pid in it, it is older than 5 s); the check
/// itself runs under `flock` so two waiters cannot both remove a fresh lock.
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
                throw .lockTimeout(path, "held by another process for more than \(timeout) "
                    + "(if no process is using the cache, delete the lock file)")
            }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
        while true {
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd < 0 {
                guard errno == EEXIST else { throw .writeFailed(path, "create lock file: \(POSIXFile.lastError)") }
                removeIfStale(path)
                try wait()
                continue
            }
            // Created: ours by existence. A portalocker-flavour process that stopped waiting
            // may flock it first; it will delete it when done, and we start again.
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                do throws(TokenCacheError) { try wait() } catch { close(fd); throw error }
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
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0, isCurrent(fd, path: path) else { return }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        let text = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
        let stale: Bool
        if let first = text.split(separator: " ").first, let pid = Int32(first), pid > 0 {
            stale = kill(pid, 0) != 0 && errno == ESRCH
        } else {
            stale = Int64(time(nil)) - Int64(info.st_mtim.tv_sec) > 5
        }
        if stale { unlink(path) }
    }

    /// Whether `fd` is still the file at `path` (not unlinked or replaced meanwhile).
    private static func isCurrent(_ fd: Int32, path: String) -> Bool {
        var held = stat()
        var named = stat()
        guard fstat(fd, &held) == 0, stat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    private static func writeOwner(_ fd: Int32) {
        let program = CommandLine.arguments.first ?? ""
        _ = POSIXFile.writeAll(fd, Array("\(getpid()) \(program)".utf8))
    }
}
