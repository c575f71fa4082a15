import Crypto

#if canImport(Glibc)
    import Glibc
#endif

/// Layer 2, the kernel keyring: the key is a `user` key in this user's persistent keyring
/// (`KEYCTL_GET_PERSISTENT`), described as `auth-sidecar:cache-key:<cache path>`, readable
/// by this uid only (possessor and user permissions; none for group and others). It needs no
/// desktop, D-Bus or password and survives logout (for the kernel's
/// `persistent_keyring_expiry`, 3 days by default, after the last use), but **not a reboot**:
/// then a new key is made and the old cache, which nothing can open any more, is set aside
/// (see ``FileTokenCacheStore``).
///
/// A new key is put in the keyring only when the cache is first written (``StoredKeyEncryption``),
/// under the cache's lock: a cache never written leaves no key behind, and two processes
/// starting at once agree on one key.
public struct KernelKeyringKeySource: CacheKeySource {
    public let layer = CacheKeyLayer.keyring
    /// The key's description in the keyring.
    public var description: String { key.description }
    private let key: KernelKey
    private let cachePath: String

    public init(cachePath: String) {
        key = KernelKey(description: "auth-sidecar:cache-key:" + cachePath)
        self.cachePath = cachePath
    }

    public func obtainKey() -> CacheKeyOutcome {
        let ring: Int32
        switch KernelKey.persistentKeyring() {
        case .success(let keyring): ring = keyring
        case .failure(let refusal):
            return .unavailable(
                reason: "the kernel refused keyctl(KEYCTL_GET_PERSISTENT): \(refusal.message)",
                enable: "allow the keyctl and add_key system calls (a container's seccomp profile often blocks them)")
        }
        let vault = Vault(key: key, keyring: ring, keeper: KernelKeyKeeper.keeper(of: key, cachePath: cachePath))
        if let found = key.find(in: ring) {
            return .encryption(StoredKeyEncryption(vault: vault, key: found, stored: true), created: false)
        }
        let made = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        return .encryption(StoredKeyEncryption(vault: vault, key: made, stored: false), created: true)
    }

    /// The persistent keyring, as ``StoredKeyEncryption`` uses it; the key it holds kept
    /// alive there (``KernelKeyKeeper``).
    struct Vault: KeyVault {
        let key: KernelKey
        let keyring: Int32
        let keeper: KernelKeyKeeper
        var layer: CacheKeyLayer { .keyring }
        var keyName: String { key.description }
        /// The persistent keyring now (a new one when the one seen at start expired).
        private var current: Int32 { (try? KernelKey.persistentKeyring().get()) ?? keyring }
        func findKey() -> [UInt8]? { key.find(in: current) }
        func storeKey(_ stored: [UInt8]) -> String? {
            key.store(stored, in: current).map { "the kernel keyring refused the cache key (\($0.message))" }
        }
        func hold(_ key: [UInt8]) { keeper.hold(key) }
        func beforeWrite() { keeper.beforeWrite() }
    }
}
