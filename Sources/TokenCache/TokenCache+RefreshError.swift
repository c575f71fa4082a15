import JSON
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the last failed refresh is kept, so `status` can say why a token was not renewed:
/// written when a refresh fails, removed when one succeeds. Beside the cache, never in it:
/// a failure leaves the cache file as it was. Never a token in a record.
public protocol RefreshErrorLog: Sendable {
    /// The last failed refresh's record, if any.
    func read() -> JSONObject?
    /// Records a failure, or with `nil` forgets it (no write when there is nothing to forget).
    func write(_ record: JSONObject?)
}

/// The file `<cache>.last-refresh-error` (0600, replaced atomically; one JSON object).
public struct FileRefreshErrorLog: RefreshErrorLog {
    /// Appended to the cache's path.
    public static let suffix = ".last-refresh-error"
    public let path: String

    public init(path: String) { self.path = path }

    public func read() -> JSONObject? {
        guard let bytes = try? POSIX.readOwnFile(path, limit: 64 << 10) else { return nil }
        return (try? JSONValue.parse(bytes))?.objectValue
    }

    public func write(_ record: JSONObject?) {
        guard let record else {
            if access(path, F_OK) == 0 { unlink(path) }
            return
        }
        _ = try? POSIXFile.replaceAtomically(path, with: JSONValue.object(record).serialized())
    }
}

/// The last failed refresh in memory (a memory cache).
public final class MemoryRefreshErrorLog: RefreshErrorLog {
    private let record = PthreadMutex<JSONObject?>(nil)

    public init() {}

    public func read() -> JSONObject? { record.withLock { $0 } }

    public func write(_ record: JSONObject?) { self.record.withLock { $0 = record } }
}
