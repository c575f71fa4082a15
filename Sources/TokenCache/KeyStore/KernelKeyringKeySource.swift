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
/// starting at once agree on one key. Whether it can be stored is known at start, before any
/// sign-in: the persistent keyring lets only its possessor search and write, so a search that
/// answers `ENOKEY` (rather than `EACCES`) comes from a process that may write there too.
///
/// Three answers (issue #35): the key; provably none (`ENOKEY` in this process's own keyring,
/// for a file sealed there or by no keyring: ``KeyringPlace/provesGone(sealedAt:)``); or out of
/// reach (`EACCES`: another session keyring; a file another user namespace's keyring sealed).
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
        let vault = Vault(key: key, keyring: ring, keeper: KernelKeyKeeper.keeper(of: key, cachePath: cachePath), cachePath: cachePath)
        let sealedHere: SealRecord?
        switch key.lookup(in: ring) {
        case .found(let found):
            return .encryption(StoredKeyEncryption(vault: vault, key: found, stored: true), created: false)
        case .refused(let why):
            // EACCES: the persistent keyring is possessor-search only, and this process's
            // session keyring does not hold the user keyring (a service, su, keyctl session).
            let reason = "the kernel refused to search the user's persistent keyring (\(why)): this process is not in the user's session keyring"
            if let sealed = SealRecord.read(cachePath), sealed.layer ?? .keyring == .keyring {
                return .outOfReach(reason: reason, enable: Self.reachIt)
            }
            return .unavailable(reason: reason + ", so no key can be stored", enable: Self.reachIt)
        case .absent:
            sealedHere = SealRecord.read(cachePath)
        }
        // No key here: provably none for a file sealed by this keyring (a reboot, an expiry, a
        // key removed); another user namespace's keyring may hold one this process cannot see.
        if let sealed = sealedHere, sealed.layer ?? .keyring == .keyring {
            let here = KeyringPlace.current
            let gone = sealed.place.map { here.provesGone(sealedAt: $0) } ?? (here.userNamespace == KeyringPlace.initialNamespace)
            if !gone {
                let there = sealed.place.map { "user namespace \($0.userNamespace)" } ?? "a keyring of an earlier version"
                return .outOfReach(
                    reason: "the file was sealed with a key in the persistent keyring of \(there), and this process is in user namespace "
                        + "\(here.userNamespace) (a container or unshare), whose keyring is another",
                    enable: Self.reachIt)
            }
        }
        let made = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        return .encryption(StoredKeyEncryption(vault: vault, key: made, stored: false), created: true)
    }

    /// What to do when the user's keyring is out of reach.
    static let reachIt =
        "join the user keyring (keyctl link @u @s), run in the user's own session (not a container or another session keyring), "
        + "use the agent's socket (AUTH_SIDECAR_SOCK), or configure a key file or key command (cache.encryption.keyFile, keyCommand)"

    /// The persistent keyring, as ``StoredKeyEncryption`` uses it; the key it holds kept
    /// alive there (``KernelKeyKeeper``).
    struct Vault: KeyVault {
        let key: KernelKey
        let keyring: Int32
        let keeper: KernelKeyKeeper
        let cachePath: String
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
