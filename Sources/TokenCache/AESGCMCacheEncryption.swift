import Crypto
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// AES-256-GCM with a key from a file: encryption at rest without a desktop keyring (the key
/// can be a container or Kubernetes secret, a systemd credential, a TPM-unsealed file).
///
/// File format: a header line, then one line of base64 of nonce | ciphertext | tag (the header
/// line is authenticated as associated data). The header records which layer sealed the file
/// (``SealRecord``): `auth-sidecar-aes256gcm-v1` (a key file or command),
/// `auth-sidecar-aes256gcm-v1 secret-service`, or `auth-sidecar-aes256gcm-v1 keyring boot=…
/// userns=…` (which kernel keyring). A process that cannot reach the key then reports where it
/// is, and never takes the file for one whose key is gone (see ``FileTokenCacheStore``).
public struct AESGCMCacheEncryption: CacheEncryption {
    /// The first line of an encrypted cache file sealed with a key the user gives.
    public static let header = Array("auth-sidecar-aes256gcm-v1\n".utf8)
    /// The first line of a cache encrypted with a key kept in the Secret Service.
    public static let secretServiceHeader = Array("auth-sidecar-aes256gcm-v1 secret-service\n".utf8)
    /// The longest header line.
    static let longestHeader = SealRecord.longestLine

    /// Out of core dumps (``GuardedKey``); a `SymmetricKey` made from it for each seal or open.
    private let key: GuardedKey
    private let path: String
    public let layer: CacheKeyLayer?

    /// The header line this cipher seals with (``header``, ``secretServiceHeader``, or the
    /// keyring's record: read only when a file is sealed, never on a read's path).
    private var ownHeader: [UInt8] {
        switch layer {
        case .secretService?: Self.secretServiceHeader
        case .keyring?: SealRecord(layer: .keyring, place: KeyringPlace.current).line
        default: Self.header
        }
    }

    /// Reads the key: 32 raw bytes, or 64 hex digits, or base64 of 32 bytes (a trailing newline
    /// allowed). The file must not be readable by group or others.
    public init(keyFile: String) throws(TokenCacheError) {
        self.init(key: try Self.readKeyFile(keyFile), path: keyFile)
    }

    /// The key in `keyFile` (see ``init(keyFile:)``).
    static func readKeyFile(_ keyFile: String) throws(TokenCacheError) -> [UInt8] {
        // The own-file rule, its directory included: no link followed, never blocking (a FIFO
        // is refused, not waited on), this user's, not writable by others.
        guard let (bytes, identity, _) = try POSIXFile.readFile(keyFile, checkingDirectory: true) else {
            throw .unreadable(keyFile, "the cache key file cannot be read")
        }
        guard identity.permissions & 0o077 == 0 else {
            throw .unreadable(keyFile, "the cache key file must not be readable by group or others (chmod 600 \(keyFile))")
        }
        guard let key = Self.key(from: bytes) else {
            throw .unreadable(keyFile, "the cache key must be 32 bytes (raw, 64 hex digits or base64)")
        }
        return key
    }

    /// A key given directly (32 bytes).
    public init?(key bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.init(key: bytes, path: "(key)")
    }

    /// A key from `layer` for the cache at `cachePath` (named in errors); a file it seals records
    /// the layer (and for the kernel keyring, ``KeyringPlace/current``).
    public init?(key bytes: [UInt8], layer: CacheKeyLayer, cachePath: String? = nil) {
        guard bytes.count == 32 else { return nil }
        self.init(key: bytes, path: cachePath ?? "(key from \(layer.rawValue))", layer: layer)
    }

    private init(key bytes: [UInt8], path: String, layer: CacheKeyLayer? = nil) {
        key = GuardedKey(bytes)
        self.path = path
        self.layer = layer
    }

    public func seal(_ plaintext: [UInt8]) throws(TokenCacheError) -> [UInt8] {
        let ownHeader = ownHeader
        guard let box = try? AES.GCM.seal(plaintext, using: key.symmetricKey(), authenticating: ownHeader), let combined = box.combined
        else {
            throw .writeFailed(path, "encrypting the cache failed")
        }
        return ownHeader + Array(combined.base64EncodedString().utf8) + [UInt8(ascii: "\n")]
    }

    /// Opens a file sealed by any layer's header (the file's own line is what is authenticated),
    /// except that a cipher of another layer names the Secret Service for a file sealed there.
    public func open(_ sealed: [UInt8]) throws(TokenCacheError) -> [UInt8] {
        if layer != .secretService, Self.isSealedBySecretService(sealed) {
            throw .unreadable(
                path, "the cache is encrypted with a key kept in the Secret Service, which this process cannot use (see auth-sidecar status)")
        }
        guard let (_, length) = SealRecord.parse(sealed) else {
            throw .unreadable(path, "the cache cannot be decrypted: an unknown header, or a damaged file")
        }
        let line = Array(sealed.prefix(length))
        let body = sealed.dropFirst(length).filter { $0 != UInt8(ascii: "\n") }
        guard let combined = Data(base64Encoded: Data(body)), let box = try? AES.GCM.SealedBox(combined: combined),
            let plaintext = try? AES.GCM.open(box, using: key.symmetricKey(), authenticating: line)
        else { throw .unreadable(path, "the cache cannot be decrypted: another key, or a damaged file") }
        return Array(plaintext)
    }

    /// Whether `bytes` look like an encrypted cache file.
    public static func isSealed(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: SealRecord.prefix) && bytes.count > SealRecord.prefix.count
            && (bytes[SealRecord.prefix.count] == UInt8(ascii: "\n") || bytes[SealRecord.prefix.count] == UInt8(ascii: " "))
    }

    /// Whether `bytes` look like a cache encrypted with a key kept in the Secret Service.
    public static func isSealedBySecretService(_ bytes: [UInt8]) -> Bool { bytes.starts(with: secretServiceHeader) }

    /// A 32-byte key from raw bytes, 64 hex digits or base64 (line ends ignored).
    static func key(from bytes: [UInt8]) -> [UInt8]? {
        if bytes.count == 32 { return bytes }
        let text = bytes.filter { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        if text.count == 64, let hex = Self.hex(text) { return hex }
        if let decoded = Data(base64Encoded: Data(text)), decoded.count == 32 { return Array(decoded) }
        return nil
    }

    private static func hex(_ text: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var index = 0
        while index < text.count {
            guard let byte = UInt8(String(decoding: text[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
            index += 2
        }
        return out
    }
}
