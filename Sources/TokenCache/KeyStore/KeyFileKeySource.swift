/// Layer 3a, a key file the user manages (`cache.encryption.keyFile`): 32 raw bytes, 64 hex
/// digits or base64, owned by this user and private (``AESGCMCacheEncryption/init(keyFile:)``).
public struct KeyFileKeySource: CacheKeySource {
    public let layer = CacheKeyLayer.keyFile
    /// The key file; `nil`: not configured.
    public let path: String?

    public init(path: String?) { self.path = path }

    public func obtainKey() -> CacheKeyOutcome {
        guard let path else {
            return .unavailable(reason: "not configured", enable: "\"cache\": {\"encryption\": {\"keyFile\": \"/absolute/path\"}}")
        }
        do throws(TokenCacheError) {
            return .key(try AESGCMCacheEncryption.readKeyFile(path), created: false)
        } catch {
            return .unavailable(reason: "\(path): \(error.reason)", enable: "fix the key file")
        }
    }
}
