import CKeyctl
import Crypto
import POSIXSupport

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
    public let description: String

    /// Possessor: all; user (this uid): view, read, write, search, link, setattr; group, other: none.
    static let permissions: UInt32 = 0x3f3f_0000

    public init(cachePath: String) {
        description = "auth-sidecar:cache-key:" + cachePath
    }

    public func obtainKey() -> CacheKeyOutcome {
        let keyring = auth_sidecar_keyctl_get_persistent(-1, AUTH_SIDECAR_KEY_SPEC_USER_KEYRING)
        guard keyring >= 0 else {
            return .unavailable(
                reason: "the kernel refused keyctl(KEYCTL_GET_PERSISTENT): \(POSIX.lastErrorString)",
                enable: "allow the keyctl and add_key system calls (a container's seccomp profile often blocks them)")
        }
        let ring = Int32(truncatingIfNeeded: keyring)
        if let key = find(in: ring) {
            return .encryption(StoredKeyEncryption(vault: Vault(source: self, keyring: ring), key: key, stored: true), created: false)
        }
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        return .encryption(StoredKeyEncryption(vault: Vault(source: self, keyring: ring), key: key, stored: false), created: true)
    }

    /// The persistent keyring, as ``StoredKeyEncryption`` uses it.
    struct Vault: KeyVault {
        let source: KernelKeyringKeySource
        let keyring: Int32
        var layer: CacheKeyLayer { .keyring }
        var keyName: String { source.description }
        func findKey() -> [UInt8]? { source.find(in: keyring) }
        func storeKey(_ key: [UInt8]) -> String? { source.store(key, in: keyring) }
    }

    /// The key in `keyring`, if there is one (of 32 bytes).
    func find(in keyring: Int32) -> [UInt8]? {
        let found = auth_sidecar_keyctl_search(keyring, "user", description)
        guard found >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes {
            auth_sidecar_keyctl_read(Int32(truncatingIfNeeded: found), $0.baseAddress, $0.count)
        }
        guard count == 32 else { return nil }
        return Array(buffer.prefix(32))
    }

    /// Puts `key` in `keyring` (this uid only); the kernel's refusal as text.
    func store(_ key: [UInt8], in keyring: Int32) -> String? {
        let added = key.withUnsafeBytes { auth_sidecar_add_key("user", description, $0.baseAddress, $0.count, keyring) }
        guard added >= 0 else { return "the kernel keyring refused the cache key (add_key): \(POSIX.lastErrorString)" }
        _ = auth_sidecar_keyctl_setperm(Int32(truncatingIfNeeded: added), Self.permissions)
        return nil
    }
}
