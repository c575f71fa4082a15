import Synchronization

/// Where the cache document lives: the persistence seam under ``TokenCache``.
///
/// A store runs each access as a transaction: exclusive (across processes, for a file),
/// on the latest document, and persisting the document before the next transaction when
/// the body changed it (its ``CacheDocument/revision`` moved). A body that throws changes
/// nothing.
public protocol TokenCacheStore: Sendable {
    /// Runs `body` on the current document, exclusively; persists the result if changed.
    ///
    /// - Throws: ``TokenCacheError`` when the stored document cannot be read or written,
    ///   or whatever `body` throws.
    func transaction<T: Sendable>(_ body: (inout CacheDocument) throws -> T) throws -> T

    /// Runs `body` on the latest document without changing it. Cheaper than a transaction:
    /// a file store takes no lock when the file did not change (one `stat`).
    ///
    /// - Throws: ``TokenCacheError`` when the stored document cannot be read, or whatever
    ///   `body` throws.
    func read<T: Sendable>(_ body: (CacheDocument) throws -> T) throws -> T

    /// Advances when the stored document was changed by someone other than this store
    /// (another process). Checking it is cheap when nothing changed.
    func changeToken() throws -> CacheChangeToken

    /// Runs `body` on the latest document when that costs no load and no wait (a file store:
    /// the file unchanged since it was read, one `stat`, and no other access in progress);
    /// `nil` otherwise. For a thread that must not block (answering from memory).
    ///
    /// - Parameter checkedAfter: a monotonic instant (``POSIX/monotonicNanoseconds()``): a
    ///   file checked since that instant is not checked again (a reader answering the requests
    ///   of one input chunk checks once, after the read).
    func readIfReady<T: Sendable>(checkedAfter: UInt64?, _ body: (CacheDocument) throws -> T) throws -> T?

    /// Whether a ``read(_:)`` now costs at most a short read of a small local file: no key to
    /// ask for, nothing to write, nothing large to parse. A thread that may wait briefly but not long (a reader
    /// with no other request running) then reads itself instead of handing the work to a task.
    var readsQuickly: Bool { get }
}

extension TokenCacheStore {
    /// A read as a transaction that changes nothing (for stores with nothing cheaper).
    public func read<T: Sendable>(_ body: (CacheDocument) throws -> T) throws -> T {
        try transaction { document in try body(document) }
    }

    /// Never ready (for stores with no cheap read): callers take ``read(_:)``.
    public func readIfReady<T: Sendable>(checkedAfter: UInt64?, _ body: (CacheDocument) throws -> T) throws -> T? { nil }

    /// Not known to be quick (for stores that cannot tell): callers hand reads to a task.
    public var readsQuickly: Bool { false }
}

/// Gives every loaded or written document a stamp never used before (``CacheDocument/stamp``).
enum DocumentStamp {
    private static let counter = Atomic<UInt64>(0)

    static func next() -> UInt64 { counter.add(1, ordering: .relaxed).newValue }
}

/// An opaque value that differs after the cache was changed by another process.
public struct CacheChangeToken: Sendable, Hashable, CustomStringConvertible {
    let generation: UInt64
    public var description: String { "generation \(generation)" }
}

/// A store in memory, for `cache: {"persistence": "memory"}` and for tests: nothing is
/// written anywhere, and nobody else can change it.
public final class MemoryTokenCacheStore: TokenCacheStore {
    private let document: Mutex<CacheDocument>

    /// An empty store, or one holding `document`.
    public init(_ document: CacheDocument = CacheDocument()) {
        var stamped = document
        stamped.stamp = DocumentStamp.next()
        self.document = Mutex(stamped)
    }

    public func transaction<T: Sendable>(_ body: (inout CacheDocument) throws -> T) throws -> T {
        try document.withLock { current in
            var working = current  // shares the tree: a change copies it, so a throw changes nothing
            let result = try body(&working)
            if working.revision != current.revision {
                working.stamp = DocumentStamp.next()
                current = working
            }
            return result
        }
    }

    public func read<T: Sendable>(_ body: (CacheDocument) throws -> T) throws -> T {
        try document.withLock { try body($0) }
    }

    public func readIfReady<T: Sendable>(checkedAfter: UInt64?, _ body: (CacheDocument) throws -> T) throws -> T? {
        try document.withLockIfAvailable { try body($0) }
    }

    public func changeToken() throws -> CacheChangeToken { CacheChangeToken(generation: 0) }

    /// Always: the document is in memory.
    public var readsQuickly: Bool { true }

    /// The serialized document (for tests and diagnostics).
    public func serialized() -> [UInt8] { document.withLock { $0.serialized() } }
}
