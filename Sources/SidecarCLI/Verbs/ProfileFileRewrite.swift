import JSON
import JSONRPC
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// `profiles use NAME`: the configuration file rewritten with `defaultProfile` set
/// (``DefaultProfileEdit``: every other byte kept), replacing the old file atomically.
enum ProfileFileRewrite {
    /// Sets the file's default profile to `name`.
    /// - Returns: the file's path.
    static func setDefault(_ name: String, options: LaunchOptions) throws(VerbFailure) -> String {
        var launch = options
        launch.profile = nil
        let sources: ConfigurationSources
        do {
            sources = try ConfigurationSources.load(launch, requireProfile: false, environment: ConfigurationSources.environmentIgnoringProfile)
        } catch {
            throw VerbFailure(message: error.message)
        }
        guard let file = sources.profiles.file else {
            throw VerbFailure(message: "no configuration file to set a default profile in")
        }
        guard file.hasProfiles, file.profiles[name] != nil else { throw VerbFailure(message: file.unknownProfile(name).message) }
        guard let resolved = realpath(file.path, nil) else { throw VerbFailure(message: "cannot resolve \(file.path): \(POSIX.lastErrorString)") }
        let target = String(cString: resolved)
        free(resolved)
        // Temporary files of rewrites killed before their rename (also the `config.json.tmp-PID`
        // of earlier versions) are removed, as the cache's are, even when nothing is rewritten.
        let base = target.lastIndex(of: "/").map { String(target[target.index(after: $0)...]) } ?? target
        POSIX.removeOrphanTemporaries(ofFile: target, legacyPrefix: base + ".tmp-")
        guard let bytes = try? POSIX.readOwnFile(target, limit: 1 << 20), case let text = String(decoding: bytes, as: UTF8.self),
            let edited = DefaultProfileEdit.setting(name, in: text),
            let parsed = try? JSONValue.parse(edited), (try? ConfigurationFile(json: parsed, path: target))?.defaultProfile == name
        else {
            throw VerbFailure(message: "cannot set defaultProfile in \(target): edit it by hand (\"defaultProfile\": \"\(name)\")")
        }
        if edited != text { try replace(target, with: Array(edited.utf8)) }
        return file.path
    }

    /// Writes `bytes` to a new file beside `path` (with `mode`, else the mode `path` has), syncs
    /// it, renames it over `path`. Temporaries of rewrites killed before their rename are
    /// removed first, as the cache's are.
    static func replace(_ path: String, with bytes: [UInt8], mode: mode_t? = nil) throws(VerbFailure) {
        POSIX.removeOrphanTemporaries(ofFile: path)
        var info = stat()
        if mode == nil, stat(path, &info) != 0 { throw VerbFailure(message: "cannot rewrite \(path): \(POSIX.lastErrorString)") }
        let temporary = POSIX.temporaryPath(beside: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode ?? (info.st_mode & 0o777))
        guard fd >= 0 else { throw VerbFailure(message: "cannot write \(temporary): \(POSIX.lastErrorString)") }
        let written = POSIX.writeAll(fd, bytes) && fsync(fd) == 0
        let closed = close(fd) == 0
        guard written, closed, rename(temporary, path) == 0 else {
            let reason = POSIX.lastErrorString
            unlink(temporary)
            throw VerbFailure(message: "cannot rewrite \(path): \(reason)")
        }
    }
}
