import Crypto
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Layer 1, the Secret Service (GNOME Keyring, KWallet, KeePassXC) over D-Bus, through
/// libsecret loaded on first use (``SecretLibrary``): the key, base64, is the secret of an item
/// of schema `org.auth-sidecar.CacheKey` whose `cache` attribute is the cache's path, in the
/// default collection. What protects it is the keyring's password (unlocked at desktop login);
/// it survives reboots.
///
/// Skipped, saying why, when there is no D-Bus session (`DBUS_SESSION_BUS_ADDRESS` unset: SSH,
/// containers, services), libsecret is not installed, the service does not answer (not
/// running, or no answer within the time limit: every call is bounded, see
/// ``LibsecretService``), or it has no key for this cache yet and its default collection is
/// missing or locked (storing one would need an unlock prompt). A new key is stored only when
/// the cache is first written (``StoredKeyEncryption``). For a file a Secret Service sealed (its
/// header says so), no item here or no answer is out of reach, never "no key": it may be
/// another session's service, or a locked or silent one (issue #35).
///
/// The fast path: the key the service gives (or takes) is copied into the kernel keyring for
/// `keyCopySeconds` (``KernelKeyringKeyCopy``), and the next process under this layer takes
/// that copy first. A copy that does not open the file is dropped and the service asked; a key
/// stored here replaces the copy. While a copy lives, a locked keyring does not stop a process.
public struct SecretServiceKeySource: CacheKeySource {
    public let layer = CacheKeyLayer.secretService
    /// The item's schema.
    public static let schema = "org.auth-sidecar.CacheKey"
    /// The cache the key is for.
    public let cachePath: String
    private let service: any SecretServiceAccess
    private let sessionBus: String?

    /// How long the kernel keyring keeps a copy of the key for the next process, by default.
    public static let defaultKeyCopySeconds = 600
    /// How long the copy is kept (0: no copy).
    public let keyCopySeconds: Int
    private let copy: any SecretServiceKeyCopy
    private let copyKeeper = SecretServiceCopyKeeper()

    /// - Parameters:
    ///   - service: the Secret Service (libsecret's unless a test gives a fake).
    ///   - sessionBus: `DBUS_SESSION_BUS_ADDRESS` (read from the environment unless given).
    ///   - keyCopySeconds: how long the kernel keyring keeps a copy of the key for the next
    ///     process (`secretServiceKeyCacheSeconds`; 0: none, and any copy left is dropped).
    ///   - copy: where that copy is kept (the kernel keyring's unless a test gives a fake).
    public init(
        cachePath: String, service: any SecretServiceAccess = LibsecretService(), sessionBus: String?? = .none,
        keyCopySeconds: Int = defaultKeyCopySeconds, copy: (any SecretServiceKeyCopy)? = nil
    ) {
        self.cachePath = cachePath
        self.service = service
        switch sessionBus {
        case .some(let given): self.sessionBus = given
        case .none: self.sessionBus = getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }
        }
        self.keyCopySeconds = max(0, keyCopySeconds)
        self.copy = copy ?? KernelKeyringKeyCopy(cachePath: cachePath)
    }

    /// The item's attributes.
    public var attributes: [String: String] { ["cache": cachePath] }

    public func obtainKey() -> CacheKeyOutcome {
        guard let sessionBus, !sessionBus.isEmpty else {
            if sealedHere {  // an SSH session, a service: the key is in the desktop session's keyring
                return .outOfReach(
                    reason: "no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set), and a Secret Service sealed it",
                    enable: "run in the desktop session, or use the agent's socket (AUTH_SIDECAR_SOCK) of an agent running there")
            }
            return .unavailable(
                reason: "no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)",
                enable: "run in a desktop session, or start a Secret Service in a D-Bus session (dbus-run-session, gnome-keyring-daemon --unlock)")
        }
        // The copy a process before this one kept: no libsecret at all. A copy that does not
        // open the file is dropped and the service asked (``StoredKeyEncryption/open(_:)``).
        if keyCopySeconds > 0, let key = copy.find() {
            let encryption = StoredKeyEncryption(vault: Vault(source: self), key: key, stored: true, copySeconds: keyCopySeconds)
            return .encryption(encryption, created: false)
        }
        if keyCopySeconds == 0 { copy.drop() }
        switch service.lookup(schema: Self.schema, attributes: attributes) {
        case .failure(let failure):
            if sealedHere { return .outOfReach(reason: failure.description, enable: Self.enable(failure)) }
            return .unavailable(reason: failure.description, enable: Self.enable(failure))
        case .success(let secret?):
            guard let key = AESGCMCacheEncryption.key(from: Array(secret.utf8)) else {
                return .unavailable(
                    reason: "its item for this cache holds no 32-byte key", enable: "delete the item (secret-tool clear cache \(cachePath))")
            }
            keepCopy(key)
            return .encryption(StoredKeyEncryption(vault: Vault(source: self), key: key, stored: true), created: false)
        case .success(nil):
            // A file a Secret Service sealed: this one may not be that one (another D-Bus session).
            if sealedHere {
                return .outOfReach(
                    reason: "the Secret Service of this D-Bus session holds no key for it, and a Secret Service sealed it (another "
                        + "session's, or its item was deleted)",
                    enable: "run in the desktop session whose keyring holds the key; if its item was deleted, move the file "
                        + "away (mv \(cachePath) \(cachePath).old) and sign in again")
            }
            if case .failure(let failure) = service.defaultCollectionUnlocked() {
                return .unavailable(reason: failure.description, enable: Self.enable(failure))
            }
            let key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
            return .encryption(StoredKeyEncryption(vault: Vault(source: self), key: key, stored: false), created: true)
        }
    }

    /// Whether the cache file was sealed with a key kept in a Secret Service.
    private var sealedHere: Bool { SealRecord.read(cachePath)?.layer == .secretService }

    /// Puts (or replaces) the kernel keyring's copy of `key`, unless copies are off.
    private func keepCopy(_ key: [UInt8]) {
        guard keyCopySeconds > 0 else { return }
        copy.keep(key, seconds: keyCopySeconds)
        copyKeeper.given(key, seconds: keyCopySeconds)
    }

    private static func enable(_ failure: SecretServiceFailure) -> String {
        switch failure {
        case .libraryMissing: "apt install libsecret-1-0"
        case .serviceError: "start a Secret Service (gnome-keyring-daemon, KeePassXC) in this D-Bus session"
        case .timedOut, .locked: "unlock the keyring (log in to the desktop, or gnome-keyring-daemon --unlock)"
        }
    }

    /// The Secret Service, as ``StoredKeyEncryption`` uses it.
    struct Vault: KeyVault {
        let source: SecretServiceKeySource
        var layer: CacheKeyLayer { .secretService }
        var cachePath: String { source.cachePath }
        var keyName: String { "Secret Service item \(SecretServiceKeySource.schema) for \(source.cachePath)" }

        /// The service's key, which replaces the kernel keyring's copy; no key (none stored,
        /// or no answer): the copy, which did not open the file or is stale, is dropped.
        func findKey() -> [UInt8]? {
            guard case .success(let secret?) = source.service.lookup(schema: SecretServiceKeySource.schema, attributes: source.attributes),
                let key = AESGCMCacheEncryption.key(from: Array(secret.utf8))
            else {
                source.copy.drop()
                return nil
            }
            source.keepCopy(key)
            return key
        }

        func storeKey(_ key: [UInt8]) -> String? {
            let label = "auth-sidecar token cache key (\(source.cachePath))"
            let secret = Data(key).base64EncodedString()
            if case .failure(let failure) = source.service.store(
                schema: SecretServiceKeySource.schema, attributes: source.attributes, label: label, secret: secret)
            {
                return "the Secret Service refused the cache key: \(failure)"
            }
            source.keepCopy(key)  // a new key replaces any copy: no copy outlives a key change
            return nil
        }

        func beforeWrite() { source.copyKeeper.beforeWrite(source.copy) }
    }
}
