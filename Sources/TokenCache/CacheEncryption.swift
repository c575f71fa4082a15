import Crypto
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Encrypts the cache file at rest. The file store seals what it writes and opens what it
/// reads; with no encryption the file is MSAL's plain JSON (readable by MSAL for Python).
public protocol CacheEncryption: Sendable {
    func seal(_ plaintext: [UInt8]) throws(TokenCacheError) -> [UInt8]
    func open(_ sealed: [UInt8]) throws(TokenCacheError) -> [UInt8]
    /// The key store layer the key came from, when known.
    var layer: CacheKeyLayer? { get }
    /// When the key was read from the kernel keyring's short-lived copy of a Secret Service
    /// key (``SecretServiceKeyCopy``): how long such a copy is kept, in seconds.
    var keyCopySeconds: Int? { get }
}

extension CacheEncryption {
    public var layer: CacheKeyLayer? { nil }
    public var keyCopySeconds: Int? { nil }
}
