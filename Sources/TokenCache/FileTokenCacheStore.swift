import Logging
import Synchronization

/// The token cache in a file, safe for several processes at once.
///
/// - The file is written with mode 0600, its directory created 0700 if missing.
/// - Every write replaces the file atomically (temporary file in the same directory,
///   fsync, rename): a reader never sees half a cache, a crash never leaves one.
/// - Every transaction, read or write, holds the msal-extensions lock on
///   `<path>.lockfile` (see ``CacheFileLock``), waiting at most `lockTimeout`.
/// - The parsed document is kept between transactions and re-read only when the file's
///   identity (inode, size, modification and change times) moved; a change seen this way
///   advances the ``changeToken()``.
/// - A file that exists but cannot be parsed fails every transaction with
///   ``TokenCacheError/Code/unreadable`` and is **never overwritten**: the tokens in it may
///   belong to other apps, and the user (or the app) decides to delete or repair it.
/// - A missing or empty file is an empty cache; the file is created by the first write.
public final class FileTokenCacheStore: TokenCacheStore {
    /// The cache file.
    public let path: String
    /// The lock file, `<path>.lockfile`.
    public let lockPath: String
    private let lockTimeout: Duration
    private let encryption: (any CacheEncryption)?
    private let logger: Logger
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var document = CacheDocument()
        /// The identity of the file `document` came from or was written to; `nil`: no file.
        var identity: FileIdentity?
        var loaded = false
        var generation: UInt64 = 0
        /// How many times the file was read and parsed (for tests).
        var loads = 0
    }

    /// A store for the cache file at `path` (nothing is touched until the first access).
    ///
    /// - Parameters:
    ///   - lockTimeout: how long to wait for another process's lock before failing.
    ///   - encryption: seals the file at rest; a plain (MSAL JSON) file found instead is read
    ///     and encrypted at the next write.
    public init(path: String, lockTimeout: Duration = .seconds(10), encryption: (any CacheEncryption)? = nil,
                logger: Logger = Logger(label: "auth-sidecar.token-cache")) {
        self.path = path
        self.lockPath = path + ".lockfile"
        self.lockTimeout = lockTimeout
        self.encryption = encryption
        self.logger = logger
    }

    public func transaction<T: Sendable>(_ body: (inout CacheDocument) throws -> T) throws -> T {
        try state.withLock { state in
            try CacheFileLock.withLock(path: lockPath, timeout: lockTimeout) {
                try refresh(&state)
                var working = state.document
                let result = try body(&working)
                if working.revision != state.document.revision {
                    let bytes = working.serialized()
                    state.identity = try POSIXFile.replaceAtomically(path, with: try encryption?.seal(bytes) ?? bytes)
                    state.document = working
                }
                return result
            }
        }
    }

    public func changeToken() throws -> CacheChangeToken {
        try state.withLock { state in
            try CacheFileLock.withLock(path: lockPath, timeout: lockTimeout) {
                try refresh(&state)
                return CacheChangeToken(generation: state.generation)
            }
        }
    }

    /// How many times the file was read and parsed so far.
    var loadCount: Int { state.withLock { $0.loads } }

    /// The JSON of the stored bytes: opened when encrypted (with the configured key), as is
    /// when plain.
    private func plaintext(of stored: [UInt8]) throws(TokenCacheError) -> [UInt8] {
        guard AESGCMCacheEncryption.isSealed(stored) else { return stored }
        guard let encryption else {
            throw .unreadable(path, "the cache is encrypted; configure cache.encryption.keyFile to read it")
        }
        return try encryption.open(stored)
    }

    /// Re-reads the file if its identity differs from the one last seen (under the lock).
    private func refresh(_ state: inout State) throws(TokenCacheError) {
        let current = try POSIXFile.identity(of: path)
        if state.loaded, current == state.identity { return }
        let document: CacheDocument
        let identity: FileIdentity?
        if current == nil {
            (document, identity) = (CacheDocument(), nil)
        } else if let (stored, read) = try POSIXFile.readFile(path) {
            let bytes = try plaintext(of: stored)
            do { document = try CacheDocument(parsing: bytes) } catch {
                logger.error("token cache unreadable; left untouched", metadata: ["path": "\(path)"])
                throw .unreadable(path, error.reason)
            }
            identity = read
        } else {
            (document, identity) = (CacheDocument(), nil)
        }
        if state.loaded {
            state.generation &+= 1
            logger.debug("token cache changed on disk", metadata: ["path": "\(path)"])
        }
        state.document = document
        state.identity = identity
        state.loaded = true
        state.loads += 1
    }
}
