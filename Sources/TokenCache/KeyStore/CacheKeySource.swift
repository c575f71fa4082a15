/// The layers a cache key can come from, in the order `cacheProtection: "auto"` tries them.
public enum CacheKeyLayer: String, Sendable, CaseIterable {
    /// A Secret Service item over D-Bus (GNOME Keyring, KWallet, KeePassXC).
    case secretService
    /// The user's persistent kernel keyring (`keyctl`): no desktop, no D-Bus; gone at reboot.
    case keyring
    /// A file holding the key (`cache.encryption.keyFile`).
    case keyFile
    /// A program printing the key (`cache.encryption.keyCommand`).
    case keyCommand
    /// No key: the cache is MSAL's plain JSON (only when opted in).
    case plaintext
}

/// What one layer answered.
public enum CacheKeyOutcome: Sendable {
    /// The 32-byte key; `created`: this layer provably had none (so a file it sealed before
    /// is one no key opens any more) and made one just now.
    case key([UInt8], created: Bool)
    /// The layer's own cipher (one that stores a new key when first used); `created` as above.
    case encryption(any CacheEncryption, created: Bool)
    /// The layer cannot give a key here: why, and the one line that enables it.
    case unavailable(reason: String, enable: String)
    /// The layer cannot tell whether the key of the sealed file exists: it may be kept where
    /// this process cannot see (another session keyring, user namespace or Secret Service, a
    /// locked keyring). The file must be left alone and never written: why, and what to do.
    case outOfReach(reason: String, enable: String)
}

/// One layer of the key store: where the cache's 32-byte AES-256-GCM key is kept.
public protocol CacheKeySource: Sendable {
    /// The layer, as `cacheProtection` names it.
    var layer: CacheKeyLayer { get }
    /// The key for the cache, made and stored here when the layer keeps none yet (and can).
    func obtainKey() -> CacheKeyOutcome
}
