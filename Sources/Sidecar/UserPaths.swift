#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the per-user files live: the agent's socket and the default configuration file.
///
/// A program may start this one with almost no environment (the Azure SDK for C++ runs `az`
/// with `PATH` alone): without `HOME` the password database's home directory for this user
/// stands in (as Python's `expanduser` does), and without `XDG_RUNTIME_DIR` the directory
/// `/run/user/UID` when it exists and is this user's (``runtimeDirectory(_:)``).
public enum UserPaths {
    /// The agent's socket: `$AUTH_SIDECAR_SOCK`, else `RUNTIME/auth-sidecar/agent.sock` (the
    /// runtime directory of ``runtimeDirectory(_:)``), else under `$XDG_CACHE_HOME` (or
    /// `~/.cache`), else `/tmp/auth-sidecar-UID/agent.sock`.
    public static func agentSocket(_ environment: (String) -> String? = ProcessEnvironment.value) -> String {
        if let explicit = environment("AUTH_SIDECAR_SOCK"), !explicit.isEmpty { return explicit }
        if let runtime = runtimeDirectory(environment) { return runtime + "/auth-sidecar/agent.sock" }
        if let cache = environment("XDG_CACHE_HOME"), cache.hasPrefix("/") { return cache + "/auth-sidecar/agent.sock" }
        if let home = home(environment) { return home + "/.cache/auth-sidecar/agent.sock" }
        return "/tmp/auth-sidecar-\(getuid())/agent.sock"
    }

    /// The forward socket's default: `forward.sock` in the agent socket's directory
    /// (`$XDG_RUNTIME_DIR/auth-sidecar/forward.sock` by default).
    public static func forwardSocket(beside agentSocket: String) -> String {
        String(agentSocket[..<(agentSocket.lastIndex(of: "/") ?? agentSocket.startIndex)]) + "/forward.sock"
    }

    /// The default configuration file: `$AUTH_SIDECAR_CONFIG` (an absolute path: a
    /// configuration of its own for one shell, such as `scripts/try.sh`'s), else
    /// `$XDG_CONFIG_HOME/auth-sidecar/config.json`, else `HOME/.config/auth-sidecar/config.json`
    /// (``home(_:)``); `nil` only when there is no home either.
    public static func defaultConfigFile(_ environment: (String) -> String? = ProcessEnvironment.value) -> String? {
        if let explicit = environment("AUTH_SIDECAR_CONFIG"), explicit.hasPrefix("/") { return explicit }
        if let config = environment("XDG_CONFIG_HOME"), config.hasPrefix("/") { return config + "/auth-sidecar/config.json" }
        if let home = home(environment) { return home + "/.config/auth-sidecar/config.json" }
        return nil
    }

    /// ``defaultConfigFile(_:)`` for a message: the path looked at, or what was missing to
    /// have one (never the name of a variable that is not set, as if it were a path).
    public static func defaultConfigFileForMessages(_ environment: (String) -> String? = ProcessEnvironment.value) -> String {
        defaultConfigFile(environment)
            ?? "the file $AUTH_SIDECAR_CONFIG names (HOME is not set and user \(getuid()) has no home directory in the password database)"
    }

    /// The user's home directory: `$HOME` when it is an absolute path, else the password
    /// database's entry for this user (`getpwuid_r`); `nil` when neither has one.
    public static func home(_ environment: (String) -> String? = ProcessEnvironment.value) -> String? {
        if let home = environment("HOME"), home.hasPrefix("/") { return home }
        return passwordDatabaseHome(uid: getuid())
    }

    /// The per-user runtime directory: `$XDG_RUNTIME_DIR` when it is an absolute path, else
    /// `/run/user/UID` when it is a directory this user owns (what systemd-logind makes and
    /// would have named), else `nil`.
    public static func runtimeDirectory(_ environment: (String) -> String? = ProcessEnvironment.value) -> String? {
        if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") { return runtime }
        let uid = getuid()
        let candidate = "/run/user/\(uid)"
        var status = stat()
        guard lstat(candidate, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == uid else { return nil }
        return candidate
    }

    /// The home directory of `uid` in the password database, when it names an absolute path.
    static func passwordDatabaseHome(uid: uid_t) -> String? {
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let home: String? = buffer.withUnsafeMutableBufferPointer { bytes in
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            guard let base = bytes.baseAddress, getpwuid_r(uid, &entry, base, bytes.count, &found) == 0, found != nil,
                let directory = entry.pw_dir
            else { return nil }
            return String(cString: directory)  // read while the buffer it points into is alive
        }
        guard let home else { return nil }
        return home.hasPrefix("/") ? home : nil
    }
}
