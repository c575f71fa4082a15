import JSON
import TokenCache

/// What protects the file cache, for `initialize`'s `cacheProtection` member and `status`:
/// the setting, the layer holding the key, why the layers before it were skipped, and whether
/// the file on disk is encrypted now (read when asked: a migration may have happened since).
public struct CacheProtectionReport: Sendable {
    let setting: CacheProtection
    let resolution: CacheKeyResolution
    let store: FileTokenCacheStore

    /// The report of `store`, opened with the key `resolution` found for `setting`.
    public init(setting: CacheProtection, resolution: CacheKeyResolution, store: FileTokenCacheStore) {
        self.setting = setting
        self.resolution = resolution
        self.store = store
    }

    var json: JSONValue {
        var object: JSONObject = [
            "setting": .string(setting.name),
            "layer": .string(resolution.layer.rawValue),
            "skipped": .array(
                resolution.skipped.map { ["layer": .string($0.layer.rawValue), "reason": .string($0.reason)] }),
            "keyCreated": .bool(resolution.created),
            "migrated": .bool(store.migratedPlaintext),
        ]
        object["encrypted"] = store.fileIsEncrypted().map(JSONValue.bool) ?? .null
        object["setAside"] = store.setAsidePath.map(JSONValue.string) ?? .null
        // The key came from the kernel keyring's copy of the Secret Service's key, kept this long.
        if let seconds = resolution.encryption?.keyCopySeconds { object["keyCopySeconds"] = .int(Int64(seconds)) }
        return .object(object)
    }
}
