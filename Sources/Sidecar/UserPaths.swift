#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the per-user files live: the agent's socket and the default configuration file.
public enum UserPaths {
    /// The agent's socket: `$AUTH_SIDECAR_SOCK`, else
    /// `$XDG_RUNTIME_DIR/auth-sidecar/agent.sock`, else under `$XDG_CACHE_HOME` (or
    /// `~/.cache`), else `/tmp/auth-sidecar-UID/agent.sock`.
    public static func agentSocket(_ environment: (String) -> String? = ProcessEnvironment.value) -> String {
        if let explicit = environment("AUTH_SIDECAR_SOCK"), !explicit.isEmpty { return explicit }
        if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") {
            return runtime + "/auth-sidecar/agent.sock"
        }
        if let cache = environment("XDG_CACHE_HOME"), cache.hasPrefix("/") { return cache + "/auth-sidecar/agent.sock" }
        if let home = environment("HOME"), home.hasPrefix("/") { return home + "/.cache/auth-sidecar/agent.sock" }
        return "/tmp/auth-sidecar-\(getuid())/agent.sock"
    }

    /// The forward socket's default: `forward.sock` in the agent socket's directory
    /// (`$XDG_RUNTIME_DIR/auth-sidecar/forward.sock` by default).
    public static func forwardSocket(beside agentSocket: String) -> String {
        String(agentSocket[..<(agentSocket.lastIndex(of: "/") ?? agentSocket.startIndex)]) + "/forward.sock"
    }

    /// The default configuration file: `$AUTH_SIDECAR_CONFIG` (an absolute path: a
    /// configuration of its own for one shell, such as `scripts/try.sh`'s), else
    /// `$XDG_CONFIG_HOME/auth-sidecar/config.json`, else `~/.config/auth-sidecar/config.json`;
    /// `nil` without any of these variables.
    public static func defaultConfigFile(_ environment: (String) -> String? = ProcessEnvironment.value) -> String? {
        if let explicit = environment("AUTH_SIDECAR_CONFIG"), explicit.hasPrefix("/") { return explicit }
        if let config = environment("XDG_CONFIG_HOME"), config.hasPrefix("/") { return config + "/auth-sidecar/config.json" }
        if let home = environment("HOME"), home.hasPrefix("/") { return home + "/.config/auth-sidecar/config.json" }
        return nil
    }
}
