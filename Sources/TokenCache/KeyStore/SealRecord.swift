import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// What a sealed cache's header line says of the key that sealed it, so a process that cannot
/// see that key tells "gone" from "not visible from here" (and never takes one for the other):
///
/// - `auth-sidecar-aes256gcm-v1`: a key the user gives (key file, key command), or a kernel
///   keyring key of an earlier version (no record);
/// - `auth-sidecar-aes256gcm-v1 secret-service`: a key kept in the Secret Service;
/// - `auth-sidecar-aes256gcm-v1 keyring boot=BOOT_ID userns=INODE`: a key in the persistent
///   keyring of the user namespace `INODE` (`/proc/self/ns/user`) during the boot `BOOT_ID`
///   (`/proc/sys/kernel/random/boot_id`).
///
/// The whole line is authenticated (the cipher's associated data): a record cannot be edited.
public struct SealRecord: Sendable, Equatable {
    /// The layer that sealed the file; `nil`: the plain header.
    public var layer: CacheKeyLayer?
    /// The keyring's place, for ``CacheKeyLayer/keyring``.
    public var place: KeyringPlace?

    /// Whether the key that sealed the file is provably gone when the layers `keyless` answered
    /// they have none (the plain header: a kernel keyring key of an earlier version, or a key
    /// the user gives, which no layer makes).
    func lostItsKey(keyless: [CacheKeyLayer]) -> Bool { keyless.contains(layer ?? .keyring) }

    /// The header lines' common start.
    static let prefix = Array("auth-sidecar-aes256gcm-v1".utf8)
    /// The longest header line read.
    static let longestLine = 192

    /// The header line (with its newline) recording this.
    var line: [UInt8] {
        var text = "auth-sidecar-aes256gcm-v1"
        switch layer {
        case .secretService?: text += " secret-service"
        case .keyring?:
            if let place { text += " keyring boot=\(place.bootID) userns=\(place.userNamespace)" }
        default: break
        }
        return Array((text + "\n").utf8)
    }

    /// The record of `bytes`' header line, with the line's length; `nil`: not a sealed cache.
    static func parse(_ bytes: some Collection<UInt8>) -> (record: SealRecord, length: Int)? {
        guard bytes.starts(with: prefix), let end = bytes.prefix(longestLine).firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let length = bytes.distance(from: bytes.startIndex, to: end) + 1
        let words = String(decoding: bytes.prefix(length - 1), as: UTF8.self).split(separator: " ")
        guard words.first == "auth-sidecar-aes256gcm-v1" else { return nil }
        switch words.count {
        case 1: return (SealRecord(layer: nil), length)
        case 2 where words[1] == "secret-service": return (SealRecord(layer: .secretService), length)
        case 4 where words[1] == "keyring" && words[2].hasPrefix("boot=") && words[3].hasPrefix("userns="):
            let place = KeyringPlace(bootID: String(words[2].dropFirst(5)), userNamespace: String(words[3].dropFirst(7)))
            return (SealRecord(layer: .keyring, place: place), length)
        default: return nil
        }
    }

    /// The record of the file at `path`; `nil`: no file, or not sealed (its first bytes read
    /// as the file store reads them: ``FileTokenCacheStore/head(of:)``).
    public static func read(_ path: String) -> SealRecord? {
        FileTokenCacheStore.head(of: path).flatMap { parse($0)?.record }
    }
}

/// Which kernel keyring a key is in: the persistent keyring is per user namespace, and every
/// keyring dies at a reboot.
public struct KeyringPlace: Sendable, Equatable {
    /// `/proc/sys/kernel/random/boot_id`.
    public var bootID: String
    /// The inode of `/proc/self/ns/user` (fixed for the initial namespace, ``initialNamespace``).
    public var userNamespace: String

    /// The initial user namespace's inode (`PROC_USER_INIT_INO`), the same at every boot.
    public static let initialNamespace = "4026531837"

    /// This process's, read once.
    public static let current = KeyringPlace(
        bootID: String(decoding: (POSIX.readFile("/proc/sys/kernel/random/boot_id", limit: 64) ?? []).filter { $0 != 10 }, as: UTF8.self),
        userNamespace: namespaceInode())

    private static func namespaceInode() -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/self/ns/user", &buffer, buffer.count - 1)
        guard count > 0 else { return "unknown" }
        let link = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)  // user:[4026531837]
        let digits = link.filter(\.isNumber)
        return digits.isEmpty ? "unknown" : digits
    }

    /// Whether a key recorded at `sealed` is provably gone when this process's persistent
    /// keyring has none (`ENOKEY`): the same namespace (this boot); or, after a reboot (every
    /// keyring died), unless the file was sealed by the initial namespace and this process is
    /// in another (a container must not take over the host's cache). Another namespace during
    /// the same boot: it may hold the key; this process cannot tell.
    func provesGone(sealedAt sealed: KeyringPlace) -> Bool {
        if sealed.bootID == bootID { return sealed.userNamespace == userNamespace }
        return sealed.userNamespace != Self.initialNamespace || userNamespace == Self.initialNamespace
    }
}
