import POSIXSupport

/// The proof-of-possession signing key's file beside the cache, `<cache>.pop-key`: the key's
/// bytes sealed under the cache's own key (``CacheEncryption``, the key store's layers), never
/// written in plaintext. Made once, under the cache's lock, so every process of the cache signs
/// with the same key; a file that exists but cannot be read or opened is an error, never taken
/// for a missing key (a new key would orphan every token bound to the old one).
public struct PopKeyFile: Sendable {
    /// `<cache>.pop-key`.
    public let path: String
    private let lockPath: String
    private let lockTimeout: Duration
    private let encryption: any CacheEncryption

    /// The key file of the cache `layout` names, sealed with `encryption` (the cache's).
    public init(layout: CacheFileLayout, encryption: any CacheEncryption, lockTimeout: Duration = .seconds(10)) {
        path = layout.popKey
        lockPath = layout.lockFile
        self.lockTimeout = lockTimeout
        self.encryption = encryption
    }

    /// The stored key's bytes; when there is none, `make()`'s, stored first (under the cache's
    /// lock: a key another process stored meanwhile wins and is returned).
    public func loadOrCreate(_ make: () throws -> [UInt8]) throws -> [UInt8] {
        if let stored = try read() { return stored }
        return try CacheFileLock.withLock(path: lockPath, timeout: lockTimeout) {
            if let stored = try read() { return stored }
            let bytes = try make()
            _ = try POSIXFile.replaceAtomically(path, with: try encryption.seal(bytes))
            return bytes
        }
    }

    /// The opened key, `nil` when the file does not exist.
    func read() throws(TokenCacheError) -> [UInt8]? {
        guard let (sealed, _, _) = try POSIXFile.readFile(path, checkingDirectory: true) else { return nil }
        guard AESGCMCacheEncryption.isSealed(sealed) else {
            throw .unreadable(path, "the proof-of-possession key file is not sealed; it is left as it is")
        }
        return try encryption.open(sealed)
    }
}
