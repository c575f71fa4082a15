#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file (or directory) refused by the own-file rule (``POSIX/openOwnFile(_:checkingDirectory:)``):
/// which path, and why in words with the fix. Never quotes what the file holds.
public struct FileRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or directory refused.
    public let path: String
    /// Why, with the fix (e.g. `is writable by group or others; fix: chmod 600 PATH`).
    public let reason: String

    public init(_ path: String, _ reason: String) {
        self.path = path
        self.reason = reason
    }

    /// `PATH: reason`.
    public var description: String { "\(path): \(reason)" }
}

/// The one rule for every file the sidecar trusts what it reads from (the cache, the key file,
/// the configuration file, `login --import`'s sources): opened with
/// `O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC` (a FIFO or device never blocks the open, a symbolic
/// link is never followed), then `fstat`: a regular file, owned by this user, not writable by
/// group or others; only then read. Otherwise another local user could plant their own
/// account, swap the file for a link to one of theirs, or hang the process. A file's
/// directory, where checked, must be a real directory (not a link itself; its parents may
/// be), owned by this user or root, not writable by group or others.
///
/// `O_NONBLOCK` stays set: it changes nothing for a regular file on Linux (reads of a regular
/// file never return `EAGAIN`), and the check refuses everything else before a read.
extension POSIX {
    /// Opens `path` under the rule, `nil` when it (or its directory) does not exist. With
    /// `checkingDirectory`, its directory is opened first (without following a link) and
    /// checked, and the file opened relative to it: the directory checked is the one read.
    /// `followingLink` is for the configuration file alone, which a dotfiles manager keeps as
    /// a link: the file it reaches must still pass the rule. The caller closes `fd`.
    public static func openOwnFile(
        _ path: String, checkingDirectory: Bool = false, followingLink: Bool = false
    ) throws(FileRefusal) -> (fd: Int32, info: stat)? {
        let flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followingLink ? 0 : O_NOFOLLOW)
        let fd: Int32
        if checkingDirectory {
            guard let directory = try openOwnDirectory(ofFile: path) else { return nil }
            fd = openat(directory, baseName(path), flags)
            close(directory)
        } else {
            fd = open(path, flags)
        }
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw symbolicLink(path) }
            throw FileRefusal(path, "cannot be opened: \(lastErrorString)")
        }
        var info = stat()
        do throws(FileRefusal) {
            guard fstat(fd, &info) == 0 else { throw FileRefusal(path, "fstat: \(lastErrorString)") }
            try checkOwnFile(info, path: path)
        } catch {
            close(fd)
            throw error
        }
        return (fd, info)
    }

    /// The whole file at `path` under the rule (``openOwnFile(_:checkingDirectory:)``); `nil`
    /// when it does not exist.
    /// - Throws: ``FileRefusal`` when the rule refuses it, it cannot be read, or it holds
    ///   more than `limit` bytes.
    public static func readOwnFile(
        _ path: String, limit: Int = .max, checkingDirectory: Bool = false, followingLink: Bool = false
    ) throws(FileRefusal) -> [UInt8]? {
        guard let (fd, info) = try openOwnFile(path, checkingDirectory: checkingDirectory, followingLink: followingLink) else {
            return nil
        }
        defer { close(fd) }
        let bytes: [UInt8]
        do {
            bytes = try readAll(fd, limit: limit, reservingCapacity: min(Int(max(info.st_size, 0)), limit) + 1)
        } catch {
            throw FileRefusal(path, "cannot be read: \(error)")
        }
        guard bytes.count <= limit else { throw FileRefusal(path, "is larger than \(limit) bytes") }
        return bytes
    }

    /// The rule for a file opened (without following links) at `path`: a regular file, owned
    /// by this user, not writable by group or others.
    public static func checkOwnFile(_ info: stat, path: String) throws(FileRefusal) {
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            throw FileRefusal(path, "is not a regular file (\(typeName(type))); replace it with a regular file, e.g. rm \(path)")
        }
        guard info.st_uid == geteuid() else {
            throw FileRefusal(
                path,
                "is owned by another user (uid \(info.st_uid)); only the user's own file is used "
                    + "(move it away, or chown it if it is yours)")
        }
        guard UInt32(info.st_mode) & 0o022 == 0 else {
            throw FileRefusal(path, "is writable by group or others; fix: chmod 600 \(path)")
        }
    }

    /// The rule for the directory `directory` (described by `info`, from `lstat` or an
    /// `fstat` of a descriptor opened without following links), named `what` in messages
    /// (`the cache directory`): a directory, not a link, owned by this user or root, not
    /// writable by group or others.
    public static func checkOwnDirectory(_ info: stat, _ directory: String, what: String) throws(FileRefusal) {
        let type = info.st_mode & S_IFMT
        if type == S_IFLNK { throw symbolicLinkDirectory(directory, what: what) }
        guard type == S_IFDIR else { throw FileRefusal(directory, "\(what) is not a directory (\(typeName(type)))") }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw FileRefusal(directory, "\(what) is owned by another user (uid \(info.st_uid)); use a directory of your own")
        }
        guard UInt32(info.st_mode) & 0o022 == 0 else {
            throw FileRefusal(
                directory,
                "\(what) is writable by group or others (another user could replace what is in it); "
                    + "fix: chmod 700 \(directory), or use a directory of your own")
        }
    }

    /// A symbolic link found where a file was expected.
    public static func symbolicLink(_ path: String) -> FileRefusal {
        FileRefusal(
            path,
            "is a symbolic link, which is not followed (another user could point it at their own file); "
                + "replace it with a regular file, e.g. rm \(path)")
    }

    /// `path` without its last component (`"."` for a bare name, `"/"` for `/x`).
    private static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The directory of `path` opened without following a link and checked; `nil` when it
    /// does not exist.
    private static func openOwnDirectory(ofFile path: String) throws(FileRefusal) -> Int32? {
        let directory = directoryName(path)
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        var info = stat()
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            // A link (ELOOP) or not a directory (ENOTDIR): lstat says which, for the message.
            if errno == ELOOP || errno == ENOTDIR, lstat(directory, &info) == 0 {
                try checkOwnDirectory(info, directory, what: "the file's directory")
            }
            throw FileRefusal(directory, "the file's directory cannot be opened: \(lastErrorString)")
        }
        do throws(FileRefusal) {
            guard fstat(fd, &info) == 0 else { throw FileRefusal(directory, "fstat: \(lastErrorString)") }
            try checkOwnDirectory(info, directory, what: "the file's directory")
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    private static func symbolicLinkDirectory(_ directory: String, what: String) -> FileRefusal {
        let target = realpath(directory, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        }
        return FileRefusal(
            directory,
            "\(what) is a symbolic link, which is not followed (another user could point it at a directory "
                + "of theirs); give the path in the real directory" + (target.map { " (\($0))" } ?? "")
                + ", or replace the link with a directory")
    }

    private static func baseName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    private static func typeName(_ type: mode_t) -> String {
        switch type {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }
}
