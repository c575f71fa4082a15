import POSIXSupport
import TokenCache

/// A store that counts its transactions (each one is a lock round trip on a file store) and
/// its reads (each one a `stat` of an unchanged file).
public final class CountingTokenCacheStore: TokenCacheStore {
    private let inner = MemoryTokenCacheStore()
    private let count = PthreadMutex((transactions: 0, reads: 0))

    public init() {}

    public var transactions: Int { count.withLock { $0.transactions } }

    public var reads: Int { count.withLock { $0.reads } }

    public func transaction<T: Sendable>(_ body: (inout CacheDocument) throws -> T) throws -> T {
        count.withLock { $0.transactions += 1 }
        return try inner.transaction(body)
    }

    public func read<T: Sendable>(_ body: (CacheDocument) throws -> T) throws -> T {
        count.withLock { $0.reads += 1 }
        return try inner.read(body)
    }

    public func readIfReady<T: Sendable>(checkedAfter: UInt64?, _ body: (CacheDocument) throws -> T) throws -> T? {
        count.withLock { $0.reads += 1 }
        return try inner.readIfReady(checkedAfter: checkedAfter, body)
    }

    public func changeToken() throws -> CacheChangeToken { try inner.changeToken() }
}
