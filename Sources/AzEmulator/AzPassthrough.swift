import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `azPassthrough`: an `az` command the shim does not answer is run by a real Azure CLI, the
/// next `az` on `PATH` that is not this binary (a link to it, a copy, a hard link: the same
/// file is skipped), with the arguments unchanged. The `az` it runs gets ``marker`` in its
/// environment: when that `az` is another copy of auth-sidecar (a venv's and the package's on
/// one `PATH`, a wrapper script), it refuses to pass the command on again
/// (``loopMessage(_:)``), where the two would otherwise run each other forever.
enum AzPassthrough {
    /// Set (to the `az` run) in the environment of the `az` a passthrough runs.
    static let marker = "AUTH_SIDECAR_AZ_PASSTHROUGH"

    /// When this process was itself run by a passthrough (``marker`` set), the error that
    /// stops a second one; `nil` otherwise.
    static func loopMessage(_ words: [String], environment: (String) -> String? = ProcessEnvironment.value) -> String? {
        guard let earlier = environment(marker), !earlier.isEmpty else { return nil }
        return "'az \(words.joined(separator: " "))' was passed by auth-sidecar's shim (azPassthrough) to \(earlier), which is "
            + "auth-sidecar's shim again (another copy, or a script running one), not Azure CLI; it is not passed on a second "
            + "time: install the real Azure CLI, or take the other copy off PATH"
    }

    /// The first executable `az` in `path`'s directories that is not the file `selfPath`
    /// names (compared by device and inode, links followed).
    static func realAz(path: String?, selfPath: String = "/proc/self/exe") -> String? {
        guard let path, let me = identity(selfPath) else { return nil }
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) where directory.hasPrefix("/") {
            let candidate = String(directory) + "/az"
            guard let found = identity(candidate), found.isRegular, found.device != me.device || found.inode != me.inode,
                access(candidate, X_OK) == 0
            else { continue }
            return candidate
        }
        return nil
    }

    /// Replaces this process with `az` run with `arguments`; returns only when that fails.
    static func exec(_ az: String, _ arguments: [String]) -> Int32 {
        let argv = ([az] + arguments).map { strdup($0) } + [nil]
        setenv(marker, az, 1)
        execv(az, argv)
        unsetenv(marker)
        let reason = String(cString: strerror(errno))
        for pointer in argv { free(pointer) }
        AzConsole.write("ERROR: cannot run \(az): \(reason)\n", to: STDERR_FILENO)
        return 1
    }

    private static func identity(_ path: String) -> (device: UInt64, inode: UInt64, isRegular: Bool)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino), (info.st_mode & S_IFMT) == S_IFREG)
    }
}
