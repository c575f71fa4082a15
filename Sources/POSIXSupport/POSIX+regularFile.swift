#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A regular file's contents and what `fstat` said of it (``POSIX/readRegularFile(_:limit:)``).
public struct RegularFile: Sendable {
    public let bytes: [UInt8]
    /// Its owner's uid.
    public let owner: UInt32
    /// Its permission bits (`st_mode & 0o7777`).
    public let permissions: UInt32
    /// The file changed while it was read (its size or modification time moved): maybe torn.
    public let changedDuringRead: Bool
}

/// Why ``POSIX/readRegularFile(_:limit:)`` read nothing.
public enum RegularFileFailure: Error, Sendable, Equatable {
    /// `open` or `fstat` failed: the system's reason.
    case cannotOpen(String)
    /// Not a regular file: what it is (`a FIFO`, `a directory`, ...).
    case notRegular(String)
    /// Longer than the limit.
    case tooLarge(Int)
    /// `read` failed: the system's reason.
    case cannotRead(String)
}

extension POSIX {
    /// The whole contents of the regular file at `path` (symbolic links followed), without
    /// ever blocking on something else: opened with `O_NONBLOCK` (a FIFO with no writer opens
    /// at once) and refused unless `fstat` says regular. At most `limit` bytes.
    public static func readRegularFile(_ path: String, limit: Int) -> Result<RegularFile, RegularFileFailure> {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return .failure(.cannotOpen(lastErrorString)) }
        defer { close(fd) }
        var before = stat()
        guard fstat(fd, &before) == 0 else { return .failure(.cannotOpen("fstat: " + lastErrorString)) }
        let type = before.st_mode & S_IFMT
        guard type == S_IFREG else { return .failure(.notRegular(fileTypeName(type))) }
        guard Int(before.st_size) <= limit else { return .failure(.tooLarge(limit)) }
        let bytes: [UInt8]
        do {
            bytes = try readAll(fd, limit: limit, reservingCapacity: Int(before.st_size) + 1)
        } catch {
            return .failure(.cannotRead(error.description))
        }
        guard bytes.count <= limit else { return .failure(.tooLarge(limit)) }
        var after = stat()
        let changed =
            fstat(fd, &after) != 0 || after.st_size != before.st_size || Int(after.st_size) != bytes.count
            || after.st_mtim.tv_sec != before.st_mtim.tv_sec || after.st_mtim.tv_nsec != before.st_mtim.tv_nsec
        return .success(
            RegularFile(bytes: bytes, owner: UInt32(before.st_uid), permissions: UInt32(before.st_mode & 0o7777), changedDuringRead: changed))
    }

    /// What a file of type `type` (`st_mode & S_IFMT`) is, as an error names it.
    public static func fileTypeName(_ type: mode_t) -> String {
        switch type {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        case S_IFREG: "a regular file"
        default: "not a regular file"
        }
    }
}
