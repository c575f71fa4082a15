import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension POSIXFile {
    /// Replaces `path` with `bytes` atomically: a temporary file (mode 0600) in the same
    /// directory is written, fsync'ed and renamed over `path`, then the directory is
    /// fsync'ed. Readers see the old or the new contents, never a mix; on failure the
    /// temporary file is removed and `path` is unchanged. Temporary files left by processes
    /// that died mid-write (`kill -9`) are removed first: they are full copies of the cache.
    ///
    /// - Returns: the identity of the new file.
    static func replaceAtomically(_ path: String, with bytes: [UInt8]) throws(TokenCacheError) -> FileIdentity {
        try makeDirectory(forFile: path)
        let directory = directoryName(path)
        POSIX.removeOrphanTemporaries(ofFile: path)
        let temporary = POSIX.temporaryPath(beside: path)

        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .writeFailed(temporary, "open: \(POSIX.lastErrorString)") }
        var failure: String?
        if fchmod(fd, 0o600) != 0 {
            failure = "fchmod: \(POSIX.lastErrorString)"
        } else if !POSIX.writeAll(fd, bytes) {
            failure = "write: \(POSIX.lastErrorString)"
        } else if fsync(fd) != 0 {
            failure = "fsync: \(POSIX.lastErrorString)"
        }
        if close(fd) != 0, failure == nil { failure = "close: \(POSIX.lastErrorString)" }
        if failure == nil, rename(temporary, path) != 0 { failure = "rename: \(POSIX.lastErrorString)" }
        if let failure {
            unlink(temporary)
            throw .writeFailed(path, failure)
        }
        syncDirectory(directory.isEmpty ? "." : directory)
        guard let identity = try? identity(of: path) else {
            throw .writeFailed(path, "the file vanished after rename")
        }
        return identity
    }

    /// Makes a rename in `directory` durable (best effort: some file systems refuse).
    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
