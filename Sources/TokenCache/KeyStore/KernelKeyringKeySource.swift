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
        let found = auth_sidecar_keyctl_search(Int32(truncatingIfNeeded: keyring), "user", description)
        if found >= 0, let key = read(Int32(truncatingIfNeeded: found)) { return .key(key, created: false) }
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let added = key.withUnsafeBytes { buffer in
            auth_sidecar_add_key("user", description, buffer.baseAddress, buffer.count, Int32(truncatingIfNeeded: keyring))
        }
        guard added >= 0 else {
            return .unavailable(
                reason: "the kernel refused add_key: \(POSIX.lastErrorString)",
                enable: "allow the keyctl and add_key system calls, or raise the key quota (kernel.keys.maxkeys)")
        }
        _ = auth_sidecar_keyctl_setperm(Int32(truncatingIfNeeded: added), Self.permissions)
        return .key(key, created: true)
    }

    private func read(_ id: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { auth_sidecar_keyctl_read(id, $0.baseAddress, $0.count) }
        guard count == 32 else { return nil }
        return Array(buffer.prefix(32))
    }
}
