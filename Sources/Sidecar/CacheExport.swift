import JSONRPC
import TokenCache

/// `auth-sidecar cache export --plaintext`: the cache file's JSON (MSAL's format), opened
/// with the key of the layer the configuration picks, for the rare user who needs it (sharing
/// with MSAL for Python, say). Reads the file as it is on disk; changes nothing.
public enum CacheExport {
    /// The cache's JSON.
    /// - Throws: -51005 when there is no file cache, no key, or the file cannot be opened.
    public static func plaintext(_ overrides: ConfigurationOverrides) throws(RPCError) -> [UInt8] {
        let cache = overrides.cache ?? .file(path: Configuration.defaultCachePath())
        guard case .file(let path, let keyFile, let keyCommand) = cache else {
            throw failure("the cache is kept in memory only: there is no file to export")
        }
        let protection = overrides.cacheProtection ?? .auto
        let resolution: CacheKeyResolution
        do throws(CacheProtectionError) {
            let sources = CacheKeyStore.sources(for: protection, cachePath: path, keyFile: keyFile, keyCommand: keyCommand)
            resolution = try CacheKeyStore.resolve(protection, sources: sources, cachePath: path)
        } catch {
            throw failure(error.message)
        }
        let store = FileTokenCacheStore(path: path, encryption: resolution.encryption)
        do {
            return try store.read { $0.serialized() }
        } catch let error as TokenCacheError {
            throw failure(error.description)
        } catch {
            throw failure("\(error)")
        }
    }

    private static func failure(_ message: String) -> RPCError {
        RPCError(code: AuthErrorMapping.code(for: .cacheUnavailable), message: message, name: "cacheUnavailable")
    }
}
