import JSONRPC
import TokenCache

/// The configured file cache opened with the key of the layer the configuration picks, for
/// the verbs that touch the file without an engine (`cache export`, `login --import`).
enum ConfiguredCacheFile {
    /// The store; -51005 when there is no file cache or no key.
    static func open(_ overrides: ConfigurationOverrides, purpose: String) throws(RPCError) -> FileTokenCacheStore {
        let cache = overrides.cache ?? .file(path: Configuration.defaultCachePath())
        guard case .file(let path, let keyFile, let keyCommand) = cache else {
            throw failure("the cache is kept in memory only: there is no file to \(purpose)")
        }
        let protection = overrides.cacheProtection ?? .auto
        let resolution: CacheKeyResolution
        do throws(CacheProtectionError) {
            let sources = CacheKeyStore.sources(
                for: protection, cachePath: path, keyFile: keyFile, keyCommand: keyCommand,
                secretServiceKeyCopySeconds: overrides.secretServiceKeyCacheSeconds ?? SecretServiceKeySource.defaultKeyCopySeconds)
            resolution = try CacheKeyStore.resolve(protection, sources: sources, cachePath: path)
        } catch {
            throw failure(error.message)
        }
        return FileTokenCacheStore(path: path, encryption: resolution.encryption)
    }

    /// -51005 `cacheUnavailable` with `message`.
    static func failure(_ message: String) -> RPCError {
        RPCError(code: AuthErrorMapping.code(for: .cacheUnavailable), message: message, name: "cacheUnavailable")
    }
}
