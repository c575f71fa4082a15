import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What identifies one version of a file: a write through rename changes the inode, an
/// in-place write changes the size or the modification/change times.
struct FileIdentity: Sendable, Equatable {
    let device: UInt64, inode: UInt64, size: Int64
    let modified: Int64, modifiedNanos: Int64, changed: Int64, changedNanos: Int64
    /// The permission bits (`st_mode & 0o7777`).
    let permissions: UInt32

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec)
        modifiedNanos = Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec)
        changedNanos = Int64(info.st_ctim.tv_nsec)
        permissions = UInt32(info.st_mode) & 0o7777
    }
}

/// Small checked wrappers over the POSIX calls the file store needs.
enum POSIXFile {
    /// The identity of `path`, `nil` when it does not exist. A symbolic link at `path` is
    /// refused, not followed (``FileSafety``).
    static func identity(of path: String) throws(TokenCacheError) -> FileIdentity? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .unreadable(path, "stat: \(POSIX.lastErrorString)")
        }
        if (info.st_mode & S_IFMT) == S_IFLNK { throw FileSafety.symbolicLink(path) }
        return FileIdentity(info)
    }

    /// The contents and identity of `path`, `nil` when it does not exist. The file is opened
    /// under the own-file rule (``POSIX/openOwnFile(_:checkingDirectory:)``: no link followed,
    /// never blocking, a regular file of this user's that group and others cannot write; with
    /// `checkingDirectory`, its directory too); with `makePrivate`, a file others can read is
    /// made private first (``FileSafety/makePrivate(_:_:path:)``, its former permissions in
    /// `madePrivate`).
    static func readFile(_ path: String, makePrivate: Bool = false, checkingDirectory: Bool = false) throws(TokenCacheError)
        -> (bytes: [UInt8], identity: FileIdentity, madePrivate: UInt32?)?
    {
        let opened: (fd: Int32, info: stat)?
        do throws(FileRefusal) { opened = try POSIX.openOwnFile(path, checkingDirectory: checkingDirectory) } catch {
            throw FileSafety.refusal(error)
        }
        guard let fd = opened?.fd, var info = opened?.info else { return nil }
        defer { close(fd) }
        let madePrivate = makePrivate ? try FileSafety.makePrivate(fd, &info, path: path) : nil
        do {
            // One allocation for the whole file.
            let bytes = try POSIX.readAll(fd, reservingCapacity: Int(max(info.st_size, 0)) + 1)
            return (bytes, FileIdentity(info), madePrivate)
        } catch {
            throw .unreadable(path, error.description)
        }
    }

    /// Creates the directory of `path` (and missing parents) with mode 0700.
    static func makeDirectory(forFile path: String) throws(TokenCacheError) {
        let directory = directoryName(path)
        guard !directory.isEmpty else { return }
        var info = stat()
        if stat(directory, &info) == 0 { return }
        try makeDirectory(forFile: directory)
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw .writeFailed(directory, "mkdir: \(POSIX.lastErrorString)")
        }
        _ = chmod(directory, 0o700)  // whatever the umask
    }

    /// `path` without its last component (`""` for a bare name, `"/"` for `/x`).
    static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

}
