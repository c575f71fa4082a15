import POSIXSupport

/// Where a layer that makes its own key keeps it (the kernel keyring, the Secret Service).
protocol KeyVault: Sendable {
    var layer: CacheKeyLayer { get }
    /// The cache the key is for (named in errors).
    var cachePath: String { get }
    /// What the key is called there, for errors.
    var keyName: String { get }
    /// The stored key, if there is one (of 32 bytes).
    func findKey() -> [UInt8]?
    /// Stores `key`; the refusal as text.
    func storeKey(_ key: [UInt8]) -> String?
    /// This process holds `key`, the one in the vault (read from it or stored there now).
    func hold(_ key: [UInt8])
    /// Before a write, under the cache's lock, while this process holds the vault's key: the
    /// vault's kernel keyring copy kept alive (renewed, put back when missing), bounded by time.
    func beforeWrite()
}

extension KeyVault {
    func hold(_ key: [UInt8]) {}
    func beforeWrite() {}
}

/// AES-256-GCM with a key kept in a ``KeyVault``. A key made at start (the vault had none) is
/// stored there at the first seal, which the file store does under the cache's lock; if
/// another process stored one first, that one is adopted. An open that fails asks the vault
/// again (another process may have stored a key; a kernel keyring copy may be wrong)
/// before it gives up. A cache never written leaves no key behind.
final class StoredKeyEncryption: CacheEncryption {
    private let vault: any KeyVault
    private let state: PthreadMutex<State>

    private struct State {
        /// Out of core dumps (``GuardedKey``).
        var key: GuardedKey
        /// Whether `key` is the one in the vault.
        var stored: Bool
        /// `key` came from the vault's kernel keyring copy, kept this long (seconds).
        var copySeconds: Int? = nil
    }

    var layer: CacheKeyLayer? { vault.layer }
    var keyCopySeconds: Int? { state.withLock { $0.copySeconds } }

    /// - Parameter copySeconds: `key` is the vault's copy in the kernel keyring, kept this long.
    init(vault: any KeyVault, key: [UInt8], stored: Bool, copySeconds: Int? = nil) {
        self.vault = vault
        state = PthreadMutex(State(key: GuardedKey(key), stored: stored, copySeconds: copySeconds))
        if stored { vault.hold(key) }
    }

    func seal(_ plaintext: [UInt8]) throws(TokenCacheError) -> [UInt8] {
        let key = try state.withLock { state throws(TokenCacheError) -> [UInt8] in
            if !state.stored {
                if let theirs = vault.findKey() {
                    state.key = GuardedKey(theirs)
                } else if let refusal = vault.storeKey(state.key.bytes()) {
                    throw .writeFailed(vault.cachePath, "\(refusal) (\(vault.keyName))")
                }
                state.stored = true
                vault.hold(state.key.bytes())
            } else {
                vault.beforeWrite()
            }
            return state.key.bytes()
        }
        return try cipher(key).seal(plaintext)
    }

    func open(_ sealed: [UInt8]) throws(TokenCacheError) -> [UInt8] {
        let key = state.withLock { $0.key.bytes() }
        do {
            return try cipher(key).open(sealed)
        } catch {
            guard let theirs = vault.findKey(), theirs != key else { throw error }
            let opened = try cipher(theirs).open(sealed)
            state.withLock { $0 = State(key: GuardedKey(theirs), stored: true) }
            vault.hold(theirs)
            return opened
        }
    }

    private func cipher(_ key: [UInt8]) throws(TokenCacheError) -> AESGCMCacheEncryption {
        guard let cipher = AESGCMCacheEncryption(key: key, layer: vault.layer, cachePath: vault.cachePath) else {
            throw .unreadable(vault.cachePath, "the \(vault.layer.rawValue) key is not 32 bytes")
        }
        return cipher
    }
}
