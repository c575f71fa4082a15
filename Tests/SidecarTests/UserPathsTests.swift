import Testing

@testable import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The per-user paths with a bare environment (a program that runs `az` with `PATH` alone).
@Suite struct UserPathsTests {
    private static let none: @Sendable (String) -> String? = { _ in nil }

    /// This user's home in the password database, read here another way (`getpwuid`).
    private var passwordHome: String? { getpwuid(getuid()).flatMap { $0.pointee.pw_dir.map { String(cString: $0) } } }

    @Test func withoutHomeThePasswordDatabasesHomeStandsIn() throws {
        let home = try #require(passwordHome)
        #expect(UserPaths.home(Self.none) == home)
        #expect(UserPaths.home { $0 == "HOME" ? "relative/home" : nil } == home)  // not a path: as unset
        #expect(UserPaths.home { $0 == "HOME" ? "/home/u" : nil } == "/home/u")
        #expect(UserPaths.defaultConfigFile(Self.none) == home + "/.config/auth-sidecar/config.json")
        #expect(UserPaths.defaultConfigFileForMessages(Self.none) == home + "/.config/auth-sidecar/config.json")
        #expect(Configuration.defaultCachePath(environment: [:]) == home + "/.cache/auth-sidecar/msal_token_cache.json")
    }

    @Test func withoutXDGRuntimeDirRunUserUIDStandsInOnlyWhenItIsTheUsers() {
        #expect(UserPaths.runtimeDirectory { $0 == "XDG_RUNTIME_DIR" ? "/r" : nil } == "/r")
        let candidate = "/run/user/\(getuid())"
        var status = stat()
        let usable = lstat(candidate, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR && status.st_uid == getuid()
        #expect(UserPaths.runtimeDirectory(Self.none) == (usable ? candidate : nil))
        let socket = UserPaths.agentSocket { $0 == "HOME" ? "/home/u" : nil }
        #expect(socket == (usable ? candidate + "/auth-sidecar/agent.sock" : "/home/u/.cache/auth-sidecar/agent.sock"))
    }
}
