import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The cache's side of the rules that keep another local user out of it (the rule itself is
/// ``POSIX/openOwnFile(_:checkingDirectory:)``'s, one for every file read): the cache file,
/// its directory, its lock files and the key file are never reached through a symbolic link,
/// and the cache file and its directory must belong to this user (or, for the directory, root)
/// and must not be writable by group or others. Otherwise someone else could plant their own
/// account in the cache, swap the file for a link to one of theirs, or block sign-in. A cache
/// file others can read (0644, as older msal-extensions wrote it) is made 0600 when read.
///
/// A refusal is ``TokenCacheError/Code/unreadable`` naming the path and the fix; no message
/// ever quotes what a file contains.
enum FileSafety {
    /// A symbolic link found where a file of the cache was expected.
    static func symbolicLink(_ path: String) -> TokenCacheError { refusal(POSIX.symbolicLink(path)) }

    /// A refusal of the own-file rule as the cache reports it.
    static func refusal(_ refusal: FileRefusal) -> TokenCacheError { .unreadable(refusal.path, refusal.reason) }

    /// Takes the read and write bits of group and others off the cache file open at `fd`
    /// (described by `info`, which passed ``POSIX/checkOwnFile(_:path:)``): its tokens are the user's alone.
    /// Only through the descriptor (opened with `O_NOFOLLOW`), never by path.
    ///
    /// - Returns: the permissions it had, when they were changed (`nil`: already private).
    static func makePrivate(_ fd: Int32, _ info: inout stat, path: String) throws(TokenCacheError) -> UInt32? {
        let permissions = UInt32(info.st_mode) & 0o7777
        guard permissions & 0o077 != 0 else { return nil }
        guard fchmod(fd, mode_t(permissions & 0o700)) == 0, fstat(fd, &info) == 0 else {
            if errno == EROFS { return nil }  // a read-only mount: nobody can change it
            throw .unreadable(
                path,
                "is readable by group or others and could not be made private: "
                    + "\(POSIX.lastErrorString); fix: chmod 600 \(path)")
        }
        return permissions
    }

    /// Checks the directory that holds the file at `path` (``POSIX/checkOwnDirectory(_:_:what:)``):
    /// not a symbolic link (the directory itself; its parents may be), owned by this user or
    /// root, not writable by group or others. A directory that does not exist yet passes (it is
    /// created 0700 by the first write).
    ///
    /// - Returns: whether the directory exists (and passed).
    @discardableResult
    static func checkDirectory(ofFile path: String) throws(TokenCacheError) -> Bool {
        let directory = POSIXFile.directoryName(path).isEmpty ? "." : POSIXFile.directoryName(path)
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            if errno == ENOENT { return false }
            throw .unreadable(directory, "stat: \(POSIX.lastErrorString)")
        }
        do throws(FileRefusal) { try POSIX.checkOwnDirectory(info, directory, what: "the cache directory") } catch {
            throw refusal(error)
        }
        return true
    }
}
