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
    /// The text of the current `errno`.
    static var lastError: String { String(cString: strerror(errno)) }

    /// The identity of `path`, `nil` when it does not exist. A symbolic link at `path` is
    /// refused, not followed (``FileSafety``).
    static func identity(of path: String) throws(TokenCacheError) -> FileIdentity? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .unreadable(path, "stat: \(lastError)")
        }
        if (info.st_mode & S_IFMT) == S_IFLNK { throw FileSafety.symbolicLink(path) }
        return FileIdentity(info)
    }

    /// The contents and identity of `path`, `nil` when it does not exist. The file is opened
    /// without following a symbolic link and must pass ``FileSafety/check(_:path:)``.
    static func readFile(_ path: String) throws(TokenCacheError) -> (bytes: [UInt8], identity: FileIdentity)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw FileSafety.symbolicLink(path) }
            throw .unreadable(path, "open: \(lastError)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path, "fstat: \(lastError)") }
        try FileSafety.check(info, path: path)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(max(info.st_size, 0)) + 1)  // one allocation for the whole file
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path, "read: \(lastError)")
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return (bytes, FileIdentity(info))
    }

    /// Creates the directory of `path` (and missing parents) with mode 0700.
    static func makeDirectory(forFile path: String) throws(TokenCacheError) {
        let directory = directoryName(path)
        guard !directory.isEmpty else { return }
        var info = stat()
        if stat(directory, &info) == 0 { return }
        try makeDirectory(forFile: directory)
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw .writeFailed(directory, "mkdir: \(lastError)")
        }
        _ = chmod(directory, 0o700)  // whatever the umask
    }

    /// `path` without its last component (`""` for a bare name, `"/"` for `/x`).
    static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}
