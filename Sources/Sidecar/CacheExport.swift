import JSONRPC
import TokenCache

/// `auth-sidecar cache export --plaintext`: the cache file's JSON (MSAL's format), opened
/// with the key of the layer the configuration picks, for the rare user who needs it (sharing
/// with MSAL for Python, say). Reads the file as it is on disk; changes nothing.
public enum CacheExport {
    /// The cache's JSON.
    /// - Throws: -51005 when there is no file cache, no key, or the file cannot be opened.
    public static func plaintext(_ overrides: ConfigurationOverrides) throws(RPCError) -> [UInt8] {
        let store = try ConfiguredCacheFile.open(overrides, purpose: "export")
        do {
            return try store.read { $0.serialized() }
        } catch let error as TokenCacheError {
            throw ConfiguredCacheFile.failure(error.description)
        } catch {
            throw ConfiguredCacheFile.failure("\(error)")
        }
    }
}
