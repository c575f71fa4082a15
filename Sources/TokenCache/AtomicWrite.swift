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
        let base = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        let prefix = directory.isEmpty ? "" : (directory == "/" ? "/" : directory + "/")
        removeOrphanTemporaries(ofFile: path)
        let temporary = "\(prefix).\(base).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

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

    /// Removes the `.{base}.tmp-{pid}-{n}` files beside `path` (`base` its last component)
    /// whose process is gone (only regular files owned by this user; a live writer's file is
    /// left alone). One `readdir` of the directory.
    static func removeOrphanTemporaries(ofFile path: String) {
        let directory = directoryName(path).isEmpty ? "." : directoryName(path)
        let base = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        let prefix = ".\(base).tmp-"
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(prefix),
                let pid = name.dropFirst(prefix.count).split(separator: "-").first.flatMap({ Int32($0) }), pid > 0,
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let full = directory + "/" + name
            var info = stat()
            guard lstat(full, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else { continue }
            unlink(full)
        }
    }

    /// Makes a rename in `directory` durable (best effort: some file systems refuse).
    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
