import CKeyctl

#if canImport(Glibc)
    import Glibc
#endif

/// A short-lived secret that is not the token cache's (a container registry's refresh token)
/// kept in this user's persistent kernel keyring until it expires: never written to a file,
/// readable by this uid only, removed by the kernel at its timeout. Where the kernel refuses
/// the keyring, nothing is kept (every read is a miss) and the caller fetches the secret anew.
public struct ExpiringKernelSecret: Sendable {
    /// The key's description, `auth-sidecar:` and the name given.
    public let description: String

    /// The most a secret here holds (a registry refresh token is about 2 KB).
    public static let maxBytes = 16_384

    public init(name: String) {
        description = "auth-sidecar:" + name
    }

    /// The secret, when the keyring holds it (a miss when the kernel refuses the keyring).
    public func load() -> String? {
        guard case .success(let keyring) = KernelKey.persistentKeyring(),
            let id = KernelKey(description: description).id(in: keyring)
        else { return nil }
        var buffer = [UInt8](repeating: 0, count: Self.maxBytes)
        let count = buffer.withUnsafeMutableBytes { auth_sidecar_keyctl_read(id, $0.baseAddress, $0.count) }
        guard count > 0, count <= Self.maxBytes else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    /// Keeps `secret` for `seconds` (at least 1); whether the kernel took it.
    @discardableResult
    public func store(_ secret: String, seconds: Int) -> Bool {
        guard seconds > 0, secret.utf8.count <= Self.maxBytes, case .success(let keyring) = KernelKey.persistentKeyring() else {
            return false
        }
        return KernelKey(description: description).store(Array(secret.utf8), in: keyring, timeout: UInt32(min(seconds, Int(UInt32.max))))
            == nil
    }

    /// Removes the secret at once, if it is there.
    public func remove() {
        guard case .success(let keyring) = KernelKey.persistentKeyring() else { return }
        KernelKey(description: description).invalidate(in: keyring)
    }
}
