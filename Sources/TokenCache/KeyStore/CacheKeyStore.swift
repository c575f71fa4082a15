/// `cacheProtection`: `auto` (the layers in order) or one layer by name.
public enum CacheProtection: Sendable, Equatable {
    case auto
    case only(CacheKeyLayer)

    /// `"auto"` or a ``CacheKeyLayer`` name.
    public init?(name: String) {
        if name == "auto" {
            self = .auto
        } else if let layer = CacheKeyLayer(rawValue: name) {
            self = .only(layer)
        } else {
            return nil
        }
    }

    /// The names `cacheProtection` accepts.
    public static let names = ["auto"] + CacheKeyLayer.allCases.map(\.rawValue)

    public var name: String {
        switch self {
        case .auto: "auto"
        case .only(let layer): layer.rawValue
        }
    }
}

/// Which layer protects the cache, and why the layers before it were passed over.
public struct CacheKeyResolution: Sendable {
    /// A layer passed over: why, and the line that enables it.
    public struct Skip: Sendable, Equatable {
        public let layer: CacheKeyLayer
        public let reason: String
        public let enable: String
    }

    /// The layer holding the key (``CacheKeyLayer/plaintext``: no key).
    public let layer: CacheKeyLayer
    /// Seals the file; `nil` for plaintext.
    public let encryption: (any CacheEncryption)?
    /// The layer had no key and made one now (the kernel keyring after a reboot, or a first
    /// run): a sealed cache this key cannot open was sealed with a key that is gone.
    public let created: Bool
    public let skipped: [Skip]
    /// The layers that answered there is provably no key (each would make one): only a file
    /// sealed by one of them may be set aside (``SealRecord/lostItsKey(keyless:)``).
    public var keyless: [CacheKeyLayer] = []
}

/// Nothing can protect the cache and plaintext was not chosen: the message names each layer
/// tried, why it failed, and the line that enables it.
public struct CacheProtectionError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let skipped: [CacheKeyResolution.Skip]
    public var description: String { message }
}

/// The key store: finds the cache's key in the first layer that has (or can keep) one.
public enum CacheKeyStore {
    /// The layers for the cache at `cachePath`. Under `auto` a configured key file or key
    /// command is the user's choice and is the only layer tried (a cache sealed with it stays
    /// readable); otherwise the Secret Service, then the kernel keyring, then the (unconfigured)
    /// key file and key command, which the error message explains. `secretServiceKeyCopySeconds`:
    /// how long the kernel keyring keeps a copy of the Secret Service's key (0: none).
    public static func sources(
        for protection: CacheProtection, cachePath: String, keyFile: String?, keyCommand: [String]?,
        secretServiceKeyCopySeconds: Int = SecretServiceKeySource.defaultKeyCopySeconds
    ) -> [any CacheKeySource] {
        if protection == .only(.plaintext) { return [] }  // nothing to ask: no key source is made
        let all: [any CacheKeySource] = [
            SecretServiceKeySource(cachePath: cachePath, keyCopySeconds: secretServiceKeyCopySeconds),
            KernelKeyringKeySource(cachePath: cachePath), KeyFileKeySource(path: keyFile), KeyCommandKeySource(arguments: keyCommand),
        ]
        switch protection {
        case .only(let layer): return all.filter { $0.layer == layer }
        case .auto:
            if keyFile != nil { return [KeyFileKeySource(path: keyFile)] }
            if keyCommand != nil { return [KeyCommandKeySource(arguments: keyCommand)] }
            return all
        }
    }

    /// The first layer of `sources` that holds a key for this cache, else the first that can
    /// make one (a layer that would make a new key never hides a later layer's existing key:
    /// the cache stays readable when, say, a Secret Service appears after the kernel keyring
    /// took the key); plaintext when `protection` is `plaintext`. Throws, naming every layer
    /// tried, when none gives a key.
    public static func resolve(
        _ protection: CacheProtection, sources: [any CacheKeySource], cachePath: String
    ) throws(CacheProtectionError) -> CacheKeyResolution {
        if protection == .only(.plaintext) {
            return CacheKeyResolution(layer: .plaintext, encryption: nil, created: false, skipped: [])
        }
        var skipped: [CacheKeyResolution.Skip] = []
        var maker: CacheKeyResolution?
        var keyless: [CacheKeyLayer] = []
        var outOfReach: [CacheKeyResolution.Skip] = []
        for source in sources {
            let found: (any CacheEncryption, Bool)
            switch source.obtainKey() {
            case .key(let key, let created):
                guard let encryption = AESGCMCacheEncryption(key: key, layer: source.layer, cachePath: cachePath) else {
                    skipped.append(.init(layer: source.layer, reason: "the key is not 32 bytes", enable: "store a 32-byte key"))
                    continue
                }
                found = (encryption, created)
            case .encryption(let encryption, let created):
                found = (encryption, created)
            case .unavailable(let reason, let enable):
                skipped.append(.init(layer: source.layer, reason: reason, enable: enable))
                continue
            case .outOfReach(let reason, let enable):
                outOfReach.append(.init(layer: source.layer, reason: reason, enable: enable))
                continue
            }
            if !found.1 {
                if let maker {
                    skipped.insert(
                        .init(
                            layer: maker.layer, reason: "holds no key for this cache; \(source.layer.rawValue) does",
                            enable: "(the cache stays with the layer holding its key)"),
                        at: maker.skipped.count)
                }
                return CacheKeyResolution(layer: source.layer, encryption: found.0, created: false, skipped: skipped)
            }
            keyless.append(source.layer)
            if maker == nil {
                maker = CacheKeyResolution(layer: source.layer, encryption: found.0, created: true, skipped: skipped)
            }
        }
        // A layer that cannot tell: no other layer's new key may take the file over.
        if let first = outOfReach.first {
            let message =
                "the token cache \(cachePath) is left as it is: its key is in the \(first.layer.rawValue) layer, out of reach of this "
                + "process (\(first.reason)); to use it: \(first.enable)"
            throw CacheProtectionError(message: message, skipped: skipped + outOfReach)
        }
        if var maker {
            maker.keyless = keyless
            return maker
        }
        if protection == .auto {
            skipped.append(.init(layer: .plaintext, reason: "not chosen", enable: "\"cacheProtection\": \"plaintext\""))
        }
        let lines = skipped.map { "  \($0.layer.rawValue): \($0.reason); to use it: \($0.enable)" }
        let message =
            "no key store can protect the token cache \(cachePath) (cacheProtection \"\(protection.name)\"); tried:\n"
            + lines.joined(separator: "\n")
        throw CacheProtectionError(message: message, skipped: skipped)
    }
}
