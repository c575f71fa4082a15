#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension POSIX {
    /// A new temporary file's path beside `path`, for an atomic replace: `.{base}.tmp-{pid}-{n}`
    /// in the same directory (`base` its last component). The one naming rule of the cache's
    /// and the configuration's rewrites, which ``removeOrphanTemporaries(ofFile:legacyPrefix:)``
    /// knows.
    public static func temporaryPath(beside path: String) -> String {
        let (directory, base) = split(path)
        let prefix = directory == "." && !path.hasPrefix("./") ? "" : (directory == "/" ? "/" : directory + "/")
        return "\(prefix).\(base).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// Removes the ``temporaryPath(beside:)`` files beside `path` whose process is gone (a
    /// writer killed mid-write: `kill -9`), and those named `{legacyPrefix}{pid}` when given;
    /// only regular files owned by this user; a live writer's file is left alone. One `readdir`
    /// of the directory.
    public static func removeOrphanTemporaries(ofFile path: String, legacyPrefix: String? = nil) {
        let (directory, base) = split(path)
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        let prefixes = [".\(base).tmp-"] + (legacyPrefix.map { [$0] } ?? [])
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let prefix = prefixes.first(where: { name.hasPrefix($0) }),
                let pid = name.dropFirst(prefix.count).split(separator: "-").first.flatMap({ Int32($0) }), pid > 0,
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let full = directory + "/" + name
            var info = stat()
            guard lstat(full, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else { continue }
            unlink(full)
        }
    }

    /// The directory (`.` when none) and last component of `path`.
    private static func split(_ path: String) -> (directory: String, base: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
