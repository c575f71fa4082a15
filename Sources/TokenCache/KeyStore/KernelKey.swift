import CKeyctl
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One `user` key in this user's persistent kernel keyring (`KEYCTL_GET_PERSISTENT`), by its
/// description: the one home of the keyctl calls that the kernel keyring layer
/// (``KernelKeyringKeySource``) and the Secret Service key's copy (``KernelKeyringKeyCopy``) use.
/// Readable by this uid only (possessor and user permissions; none for group and others).
struct KernelKey: Sendable {
    /// The key's description in the keyring.
    let description: String

    /// Possessor: all; user (this uid): view, read, write, search, link, setattr; group, other: none.
    static let permissions: UInt32 = 0x3f3f_0000

    /// This user's persistent keyring (linked into the user keyring); the kernel's refusal as text.
    static func persistentKeyring() -> Result<Int32, KernelKeyRefusal> {
        let keyring = auth_sidecar_keyctl_get_persistent(-1, AUTH_SIDECAR_KEY_SPEC_USER_KEYRING)
        guard keyring >= 0 else { return .failure(KernelKeyRefusal(message: POSIX.lastErrorString)) }
        return .success(Int32(truncatingIfNeeded: keyring))
    }

    /// The key's id in `keyring`, if it is there.
    func id(in keyring: Int32) -> Int32? {
        let found = auth_sidecar_keyctl_search(keyring, "user", description)
        return found >= 0 ? Int32(truncatingIfNeeded: found) : nil
    }

    /// The key in `keyring`, if there is one (of 32 bytes).
    func find(in keyring: Int32) -> [UInt8]? {
        if case .found(let key) = lookup(in: keyring) { return key }
        return nil
    }

    /// What `keyring` says of the key: here it is; it is not there (`ENOKEY`, or expired or
    /// revoked); or the kernel refused to say (`EACCES`: a keyring this process may not
    /// search, such as the persistent keyring from another session keyring).
    enum Lookup: Sendable {
        case found([UInt8])
        case absent
        case refused(String)
    }

    func lookup(in keyring: Int32) -> Lookup {
        let found = auth_sidecar_keyctl_search(keyring, "user", description)
        guard found >= 0 else {
            let code = errno
            return Self.meansAbsent(code) ? .absent : .refused(POSIX.errorString(code))
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { auth_sidecar_keyctl_read(Int32(truncatingIfNeeded: found), $0.baseAddress, $0.count) }
        guard count >= 0 else { return .refused("KEYCTL_READ: " + POSIX.lastErrorString) }
        guard count == 32 else { return .refused("the key holds \(count) bytes, not 32") }
        return .found(Array(buffer.prefix(32)))
    }

    /// Whether the key is provably not in `keyring` (one search, the key not read).
    func isAbsent(in keyring: Int32) -> Bool {
        auth_sidecar_keyctl_search(keyring, "user", description) < 0 && Self.meansAbsent(errno)
    }

    /// A search's errno that says the key is not there (rather than that it may not be seen).
    private static func meansAbsent(_ code: Int32) -> Bool { code == ENOKEY || code == EKEYEXPIRED || code == EKEYREVOKED }

    /// Puts `key` in `keyring` (replacing one of the same description), this uid only, removed
    /// by the kernel after `timeout` seconds when given; the kernel's refusal as text. A key
    /// whose timeout cannot be set is not left behind.
    func store(_ key: [UInt8], in keyring: Int32, timeout: UInt32? = nil) -> KernelKeyRefusal? {
        let added = key.withUnsafeBytes { auth_sidecar_add_key("user", description, $0.baseAddress, $0.count, keyring) }
        guard added >= 0 else { return KernelKeyRefusal(message: "add_key: " + POSIX.lastErrorString) }
        let id = Int32(truncatingIfNeeded: added)
        if let timeout, auth_sidecar_keyctl_set_timeout(id, timeout) < 0 {
            let refusal = KernelKeyRefusal(message: "KEYCTL_SET_TIMEOUT: " + POSIX.lastErrorString)
            _ = auth_sidecar_keyctl_invalidate(id)
            return refusal
        }
        _ = auth_sidecar_keyctl_setperm(id, Self.permissions)
        return nil
    }

    /// Removes the key from `keyring` at once, if it is there.
    func invalidate(in keyring: Int32) {
        if let found = id(in: keyring) { _ = auth_sidecar_keyctl_invalidate(found) }
    }
}

/// What the kernel said when it refused a keyring call.
struct KernelKeyRefusal: Error, Sendable {
    let message: String
}
