import Synchronization

/// AES-256-GCM with the kernel keyring's key (``KernelKeyringKeySource``). A key made at start
/// (none was in the keyring) is stored there at the first seal, which the file store does under
/// the cache's lock; if another process stored one first, that one is adopted. An open that
/// fails asks the keyring again, for the same reason, before it gives up.
final class KeyringEncryption: CacheEncryption {
    private let source: KernelKeyringKeySource
    private let keyring: Int32
    private let state: Mutex<State>

    private struct State {
        var key: [UInt8]
        /// Whether `key` is the one in the keyring.
        var stored: Bool
    }

    init(source: KernelKeyringKeySource, keyring: Int32, key: [UInt8], stored: Bool) {
        self.source = source
        self.keyring = keyring
        state = Mutex(State(key: key, stored: stored))
    }

    func seal(_ plaintext: [UInt8]) throws(TokenCacheError) -> [UInt8] {
        let key = try state.withLock { state throws(TokenCacheError) -> [UInt8] in
            if !state.stored {
                if let theirs = source.find(in: keyring) {
                    state.key = theirs
                } else if let refusal = source.store(state.key, in: keyring) {
                    throw .writeFailed(source.description, refusal)
                }
                state.stored = true
            }
            return state.key
        }
        return try Self.cipher(key).seal(plaintext)
    }

    func open(_ sealed: [UInt8]) throws(TokenCacheError) -> [UInt8] {
        let key = state.withLock { $0.key }
        do {
            return try Self.cipher(key).open(sealed)
        } catch {
            guard let theirs = source.find(in: keyring), theirs != key else { throw error }
            let opened = try Self.cipher(theirs).open(sealed)
            state.withLock { $0 = State(key: theirs, stored: true) }
            return opened
        }
    }

    private static func cipher(_ key: [UInt8]) throws(TokenCacheError) -> AESGCMCacheEncryption {
        guard let cipher = AESGCMCacheEncryption(key: key, layer: .keyring) else {
            throw .unreadable("(key from keyring)", "the keyring's key is not 32 bytes")
        }
        return cipher
    }
}
