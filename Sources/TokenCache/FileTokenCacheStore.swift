import Logging
import POSIXSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The token cache in a file, safe for several processes at once.
///
/// - The file is written with mode 0600, its directory created 0700 if missing.
/// - Every write replaces the file atomically (temporary file in the same directory,
///   fsync, rename): a reader never sees half a cache, a crash never leaves one.
/// - Every write holds the msal-extensions lock on `<path>.lockfile` (see ``CacheFileLock``),
///   waiting at most `lockTimeout`, and re-reads the file first if it changed.
/// - Reads take no lock: the parsed document is kept and the file re-read only when its
///   identity (inode, size, modification and change times) moved, so a read of an unchanged
///   cache costs one `stat`. A changed file is read without the lock when it reads back whole
///   and stable (same identity before and after, parses); otherwise (another SDK rewriting it
///   in place, say) it is read again under the lock. A change seen this way advances the
///   ``changeToken()``.
/// - A file that exists but cannot be parsed fails every access with
///   ``TokenCacheError/Code/unreadable`` and is **never overwritten**: the tokens in it may
///   belong to other apps, and the user (or the app) decides to delete or repair it.
/// - A missing or empty file is an empty cache; the file is created by the first write.
/// - A symbolic link at the path or as its directory is refused, never followed, and so are a
///   file or directory another user could write (``FileSafety``); a file others can read is
///   made 0600 (with a warning) when read. Errors never quote the file's contents.
/// - Temporary files of writers killed mid-write (full copies of the cache) are removed
///   whenever the file is (re)loaded or written.
public final class FileTokenCacheStore: TokenCacheStore {
    /// The cache file.
    public let path: String
    /// The files beside the cache (``CacheFileLayout``).
    public let layout: CacheFileLayout
    /// The lock file, `<path>.lockfile`.
    public var lockPath: String { layout.lockFile }
    private let lockTimeout: Duration
    private let encryption: (any CacheEncryption)?
    private let setAsideUnopenable: Bool
    private let keylessLayers: [CacheKeyLayer]?
    private let logger: Logger
    /// Concurrency: every access to the kept document and what is known of the file goes
    /// through this mutex (one access at a time in this process; other processes are kept
    /// apart by the lock file for writes).
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var document = CacheDocument()
        /// The identity of the file `document` came from or was written to; `nil`: no file.
        var identity: FileIdentity?
        /// Whether `document` is what the file at `identity` holds.
        var loaded = false
        /// Where a cache that could not be decrypted was moved (``init(path:lockTimeout:encryption:setAsideUnopenable:logger:)``).
        var setAside: String?
        /// Whether a plaintext file was encrypted in place.
        var migrated = false
        var generation: UInt64 = 0
        /// How many times the file was read and parsed (for tests).
        var loads = 0
        /// How many times the lock file was taken (for tests).
        var locks = 0
        /// How many times the file's identity was looked at (for tests).
        var identityChecks = 0
        /// When (monotonic nanoseconds) the last check that found `document` current began.
        var lastCheckStarted: UInt64 = 0
        /// Whether the directory passed ``FileSafety/checkDirectory(ofFile:)`` (once it exists).
        var directoryChecked = false
    }

    /// A store for the cache file at `path` (nothing is touched until the first access).
    ///
    /// - Parameters:
    ///   - lockTimeout: how long to wait for another process's lock before failing.
    ///   - encryption: seals the file at rest; a plain (MSAL JSON) file found instead is
    ///     **migrated** on first read: sealed and put in its place atomically under the lock
    ///     (temporary file, fsync, rename: a crash leaves the old file or the new, never neither).
    ///   - setAsideUnopenable: a sealed file this key cannot open is renamed
    ///     `<path>.undecryptable-<unix time>` (never deleted) and the cache starts empty, with a
    ///     warning: the key's layer made a new key (the kernel keyring after a reboot), so the
    ///     old key is gone for good. Otherwise such a file fails every access, untouched.
    ///   - keylessLayers: with `setAsideUnopenable`, the layers that provably have no key
    ///     (``CacheKeyResolution/keyless``): only a file whose header names one of them (the
    ///     plain header: the kernel keyring's) is set aside; `nil`: any.
    public init(
        path: String, lockTimeout: Duration = .seconds(10), encryption: (any CacheEncryption)? = nil,
        setAsideUnopenable: Bool = false, keylessLayers: [CacheKeyLayer]? = nil,
        logger: Logger = Logger(label: "auth-sidecar.token-cache")
    ) {
        self.path = path
        layout = CacheFileLayout(path: path)
        self.lockTimeout = lockTimeout
        self.encryption = encryption
        self.setAsideUnopenable = setAsideUnopenable
        self.keylessLayers = keylessLayers
        self.logger = logger
    }

    public func transaction<T: Sendable>(_ body: (inout CacheDocument) throws -> T) throws -> T {
        try state.withLock { state in
            try checkDirectory(&state)  // before the lock file is made in it
            state.locks += 1
            return try CacheFileLock.withLock(path: lockPath, timeout: lockTimeout) {
                try refresh(&state, locked: true)
                var working = state.document
                let before = working.revision
                // `working` alone holds the tree, so it is changed in place; until the file is
                // known to match it again, the next access re-reads the file (a body or a
                // write that throws leaves nothing half-done behind).
                state.document = CacheDocument()
                state.loaded = false
                let result = try body(&working)
                if working.revision != before {
                    let bytes = working.serialized()
                    state.identity = try POSIXFile.replaceAtomically(path, with: try encryption?.seal(bytes) ?? bytes)
                    working.stamp = DocumentStamp.next()
                }
                state.document = working
                state.loaded = true
                return result
            }
        }
    }

    public func read<T: Sendable>(_ body: (CacheDocument) throws -> T) throws -> T {
        try state.withLock { state in
            try refresh(&state, locked: false)
            return try body(state.document)
        }
    }

    /// The kept document when the file is as it was read (one `stat`; none when the last
    /// check began after `checkedAfter`) and no other access is in progress (a transaction
    /// may be waiting for the lock file); `nil` otherwise, so the caller never waits: a
    /// changed file is for ``read(_:)`` to load.
    public func readIfReady<T: Sendable>(checkedAfter: UInt64?, _ body: (CacheDocument) throws -> T) throws -> T? {
        let ready: T?? = try state.withLockIfAvailable { state throws -> T? in
            guard state.loaded, state.directoryChecked else { return nil }
            if let checkedAfter, state.lastCheckStarted > checkedAfter { return try body(state.document) }
            let started = POSIX.monotonicNanoseconds()
            let current = try POSIXFile.identity(of: path)
            state.identityChecks += 1
            guard current == state.identity else { return nil }
            state.lastCheckStarted = started
            return try body(state.document)
        }
        return ready ?? nil
    }

    /// The largest file ``readsQuickly`` reads on the caller's thread (about 50 accounts; jansson
    /// parses it in about a millisecond).
    static let quickReadLimit: Int64 = 256 << 10

    /// A file of at most ``quickReadLimit`` bytes, or none (one `lstat`). With encryption, only a
    /// file sealed already (its first bytes read): the key is in memory since the store was
    /// made, and opening it is a decryption; a plaintext file found instead is encrypted in place
    /// under the lock at its first read, which is for a task.
    public var readsQuickly: Bool {
        let identity: FileIdentity?
        do {
            identity = try POSIXFile.identity(of: path)
        } catch {
            return false  // a symbolic link or an unreadable path: the full read reports it
        }
        guard let identity else { return true }  // no file: an empty cache
        guard identity.size <= Self.quickReadLimit else { return false }
        return encryption == nil || fileIsEncrypted() == true
    }

    public func changeToken() throws -> CacheChangeToken {
        try state.withLock { state in
            try refresh(&state, locked: false)
            return CacheChangeToken(generation: state.generation)
        }
    }

    /// Where an undecryptable cache was set aside: by this store, else the newest
    /// `<path>.undecryptable-<time>` still beside the cache (until the user removes it).
    public var setAsidePath: String? {
        if let made = state.withLock({ $0.setAside }) { return made }
        return Self.newestSetAside(of: layout)
    }

    private static func newestSetAside(of layout: CacheFileLayout) -> String? {
        let full = layout.undecryptablePrefix
        let slash = full.lastIndex(of: "/").map { full.index(after: $0) } ?? full.startIndex
        let directory = String(full[..<slash])
        let prefix = String(full[slash...])
        guard let dir = opendir(directory.isEmpty ? "." : directory) else { return nil }
        defer { closedir(dir) }
        var newest: (Int, String)?
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(prefix), let time = Int(name.dropFirst(prefix.count)) else { continue }
            if time > newest?.0 ?? -1 { newest = (time, directory + name) }
        }
        return newest?.1
    }

    /// Whether a plaintext cache was encrypted in place by this store.
    public var migratedPlaintext: Bool { state.withLock { $0.migrated } }

    /// Whether the file on disk is sealed now (`nil`: there is no file).
    public func fileIsEncrypted() -> Bool? {
        guard let bytes = Self.head(of: path) else { return nil }
        return AESGCMCacheEncryption.isSealed(bytes)
    }

    /// The file's first bytes (as many as the encrypted file's header), `nil` when it cannot be
    /// opened. Never follows a symbolic link, never waits on a FIFO (the read refuses one:
    /// ``POSIX/openOwnFile(_:checkingDirectory:)``).
    static func head(of path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: AESGCMCacheEncryption.longestHeader)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                buffer.baseAddress.map { Glibc.read(fd, $0 + count, buffer.count - count) } ?? -1
            }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        return Array(bytes.prefix(count))
    }

    /// How many times the file was read and parsed so far.
    var loadCount: Int { state.withLock { $0.loads } }

    /// How many times the lock file was taken so far.
    var lockCount: Int { state.withLock { $0.locks } }

    /// How many times the file's identity was looked at so far.
    var identityCheckCount: Int { state.withLock { $0.identityChecks } }

    /// The JSON of the stored bytes: opened when encrypted (with the configured key), as is
    /// when plain.
    private func plaintext(of stored: [UInt8]) throws(TokenCacheError) -> [UInt8] {
        guard AESGCMCacheEncryption.isSealed(stored) else { return stored }
        guard let encryption else {
            throw .unreadable(
                path, "the cache is encrypted; set cacheProtection to the layer holding its key (or cache.encryption.keyFile)")
        }
        return try encryption.open(stored)
    }

    /// Whether the file is a plain, non-empty cache that should be sealed.
    private func needsSealing() throws(TokenCacheError) -> Bool {
        guard let bytes = Self.head(of: path) else { return false }
        return !bytes.isEmpty && !AESGCMCacheEncryption.isSealed(bytes)
    }

    /// Migration: the plain file sealed in place, under the lock (re-read there: another
    /// process may have done it). Returns the new file's identity, `nil` if nothing was done.
    private func sealInPlace(state: inout State, locked: Bool) throws(TokenCacheError) -> FileIdentity? {
        guard let encryption else { return nil }
        let seal = { () throws(TokenCacheError) -> FileIdentity? in
            guard let (stored, _) = try self.readFile(), !stored.isEmpty, !AESGCMCacheEncryption.isSealed(stored) else { return nil }
            guard (try? CacheDocument(parsing: stored)) != nil else {  // never seal what is not a cache
                throw .unreadable(self.path, "not a token cache; left untouched")
            }
            return try POSIXFile.replaceAtomically(self.path, with: try encryption.seal(stored))
        }
        let identity: FileIdentity?
        if locked {
            identity = try seal()
        } else {
            state.locks += 1
            do {
                identity = try CacheFileLock.withLock(path: lockPath, timeout: lockTimeout) { try seal() }
            } catch let error as TokenCacheError {
                throw error
            } catch {
                throw .writeFailed(path, "\(error)")
            }
        }
        if identity != nil {
            state.migrated = true
            logger.notice("token cache was plaintext; encrypted it in place", metadata: ["path": "\(path)"])
        }
        return identity
    }

    /// Under the lock: a sealed file this key cannot open moved aside (``init(path:lockTimeout:encryption:setAsideUnopenable:logger:)``).
    private func setAside(_ state: inout State) throws(TokenCacheError) {
        let aside = layout.undecryptable(at: time(nil))
        guard rename(path, aside) == 0 else { throw .writeFailed(path, "rename to \(aside): \(POSIX.lastErrorString)") }
        state.setAside = aside
        logger.warning(
            "token cache cannot be decrypted with the key store's new key (the kernel keyring forgets keys at reboot); set it aside and started an empty cache: sign in again",
            metadata: ["path": "\(path)", "setAside": "\(aside)"])
    }

    /// Re-reads the file if its identity differs from the one last seen. Without the lock
    /// (`locked` false) a changed file is first read optimistically (see the type's notes).
    private func refresh(_ state: inout State, locked: Bool) throws(TokenCacheError) {
        try checkDirectory(&state)
        let started = POSIX.monotonicNanoseconds()
        let current = try POSIXFile.identity(of: path)
        state.identityChecks += 1
        if state.loaded, current == state.identity {
            state.lastCheckStarted = started
            return
        }
        if state.directoryChecked { POSIX.removeOrphanTemporaries(ofFile: path) }
        var (document, identity) = try load(current, state: &state, locked: locked)
        if encryption != nil, identity != nil, try needsSealing() {
            identity = try sealInPlace(state: &state, locked: locked) ?? identity
        }
        if state.loads > 0, identity != state.identity {
            state.generation &+= 1
            logger.debug("token cache changed on disk", metadata: ["path": "\(path)"])
        }
        document.stamp = DocumentStamp.next()
        state.document = document
        state.identity = identity
        state.loaded = true
        state.loads += 1
        state.lastCheckStarted = started
    }

    /// Checks the directory (``FileSafety/checkDirectory(ofFile:)``) until it exists and passed.
    private func checkDirectory(_ state: inout State) throws(TokenCacheError) {
        if !state.directoryChecked { state.directoryChecked = try FileSafety.checkDirectory(ofFile: path) }
    }

    /// The file read (made private if others could read it: ``FileSafety/makePrivate(_:_:path:)``).
    private func readFile() throws(TokenCacheError) -> (bytes: [UInt8], identity: FileIdentity)? {
        guard let (bytes, identity, madePrivate) = try POSIXFile.readFile(path, makePrivate: true) else { return nil }
        if let madePrivate {
            logger.warning(
                "token cache was readable by other users; made it 0600",
                metadata: ["path": "\(path)", "was": "0\(String(madePrivate, radix: 8))"])
        }
        return (bytes, identity)
    }

    private func load(_ current: FileIdentity?, state: inout State, locked: Bool) throws(TokenCacheError)
        -> (CacheDocument, FileIdentity?)
    {
        guard current != nil else { return (CacheDocument(), nil) }
        if locked { return try loadFile(&state) }
        if let stable = try? loadStable() { return stable }
        state.locks += 1
        do {
            return try CacheFileLock.withLock(path: lockPath, timeout: lockTimeout) { try loadFile(&state) }
        } catch let error as TokenCacheError {
            throw error
        } catch {
            throw .unreadable(path, "\(error)")
        }
    }

    /// The file read without the lock, if it read back whole: non-empty, the same identity
    /// after the read as when opened, and parseable. `nil` (or a throw): read it under the lock.
    private func loadStable() throws -> (CacheDocument, FileIdentity?)? {
        guard let (stored, opened) = try readFile() else { return (CacheDocument(), nil) }
        guard !stored.isEmpty, try POSIXFile.identity(of: path) == opened else { return nil }
        return (try CacheDocument(parsing: try plaintext(of: stored)), opened)
    }

    /// The file as it is now (call under the lock).
    private func loadFile(_ state: inout State) throws(TokenCacheError) -> (CacheDocument, FileIdentity?) {
        guard let (stored, identity) = try readFile() else { return (CacheDocument(), nil) }
        let bytes: [UInt8]
        do throws(TokenCacheError) {
            bytes = try plaintext(of: stored)
        } catch {
            // A file whose key is in the Secret Service is never taken for one whose key is gone
            // when another layer made the new key: the service may just be out of reach here.
            // Nor is one whose layer cannot prove its key gone (``SealRecord/lostItsKey(keyless:)``).
            guard setAsideUnopenable, encryption != nil, let record = SealRecord.parse(stored)?.record,
                !AESGCMCacheEncryption.isSealedBySecretService(stored) || encryption?.layer == .secretService,
                keylessLayers.map({ record.lostItsKey(keyless: $0) }) ?? true
            else { throw error }
            try setAside(&state)
            return (CacheDocument(), nil)
        }
        do {
            return (try CacheDocument(parsing: bytes), identity)
        } catch {
            logger.error("token cache unreadable; left untouched", metadata: ["path": "\(path)"])
            throw .unreadable(path, error.reason)
        }
    }
}
