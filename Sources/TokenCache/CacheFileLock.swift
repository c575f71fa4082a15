#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The cross-process lock on `<cache path>.lockfile`, following msal-extensions'
/// `CrossPlatLock` so that MSAL for Python/.NET apps using msal-extensions and the sidecar
/// exclude one another:
///
/// - the lock file is opened (created 0600 if missing) and locked with
///   `flock(LOCK_EX | LOCK_NB)`, retried every few milliseconds until a deadline
///   (10 s by default), then ``TokenCacheError/Code/lockTimeout``;
/// - once held, `"{pid} {argv[0]}"` is written into it (for a human wondering who holds it);
/// - on release the file is deleted, as msal-extensions does (its waiters poll for the
///   file's absence with `open(..., "x")` before locking, so a lock file left behind would
///   cost each of them a 5 s wait).
///
/// Because the file is deleted, a waiter may end up holding a lock on an unlinked inode;
/// after every successful `flock` the descriptor's inode is compared with the path's and
/// the lock is retried if they differ. This lock is unlinked *before* it is released, so two
/// holders of this implementation can never overlap. (msal-extensions unlocks before it
/// unlinks, a window this code cannot close for the other side.)
enum CacheFileLock {
    /// Runs `body` holding the lock on `path`, waiting at most `timeout` for it; the lock
    /// file is deleted and the lock released when `body` returns or throws.
    ///
    /// Blocks the calling thread while another process holds the lock.
    static func withLock<T>(path: String, timeout: Duration, _ body: () throws -> T) throws -> T {
        let fd = try acquire(path: path, timeout: timeout)
        defer {
            unlink(path)  // before unlocking, so nobody can lock this inode and keep it
            close(fd)
        }
        return try body()
    }

    private static func acquire(path: String, timeout: Duration) throws(TokenCacheError) -> Int32 {
        try POSIXFile.makeDirectory(forFile: path)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause: UInt32 = 1_000  // microseconds; doubles up to 50 ms
        while true {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw .writeFailed(path, "open lock file: \(POSIXFile.lastError)") }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                if isCurrent(fd, path: path) {
                    writeOwner(fd)
                    return fd
                }
                close(fd)  // locked an unlinked lock file: its owner has released it; retry now
                continue
            }
            let failure = errno
            close(fd)
            guard failure == EWOULDBLOCK || failure == EINTR else {
                throw .writeFailed(path, "flock: \(String(cString: strerror(failure)))")
            }
            guard clock.now < deadline else {
                throw .lockTimeout(path, "another process held the token cache lock for more than \(timeout)")
            }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
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
        _ = ftruncate(fd, 0)
        _ = POSIXFile.writeAll(fd, Array("\(getpid()) \(program)".utf8))
    }
}
