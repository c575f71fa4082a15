import CBuildStamp
import Sidecar

/// What `--version` prints: the version (`LibraryInfo`, the one place it is written), the
/// commit the binary was built from and the build flavour, e.g.
/// `auth-sidecar 0.1.0 (commit 51e95b2c0ffe, release-lean build)`.
enum VersionText {
    /// `release-lean`: scripts/build.sh's binary (static Swift runtime, jansson and libstdc++,
    /// stripped; it defines `AUTH_SIDECAR_LEAN_BUILD`); `release`: a plain
    /// `swift build -c release`; `debug`: a debug build.
    static var flavour: String {
        #if DEBUG
            return "debug"
        #elseif AUTH_SIDECAR_LEAN_BUILD
            return "release-lean"
        #else
            return "release"
        #endif
    }

    /// The commit scripts/build.sh stamped (`+dirty` when the tree had changes), else `unknown`.
    static var commit: String { String(cString: auth_sidecar_build_commit()) }

    /// The one line.
    static var line: String { "\(ServerInfo.name) \(ServerInfo.version) (commit \(commit), \(flavour) build)" }
}
