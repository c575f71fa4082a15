import POSIXSupport

/// A forwarded session's forced-refresh budget: at most one forced refresh per token (its
/// scopes) per ``interval``. A remote asking `forceRefresh` in a loop would otherwise make a
/// refresh-token grant per request and push the laptop's client into the service's throttling
/// and loop detection (AADSTS50196), which then hits the laptop's own renewals. Past the budget,
/// a forced request is answered from the fresh token the last one brought (``ForwardSessionPolicy``
/// drops its `forceRefresh`), and a Graph call or a reply stage does not ask for another one.
public final class ForwardRefreshBudget: Sendable {
    /// How long one forced refresh of a token covers.
    public let interval: Duration
    /// The monotonic time (ms) of the last forced refresh per token key.
    private let last = PthreadMutex<[String: Int64]>([:])

    public init(interval: Duration = .seconds(60)) { self.interval = interval }

    /// Whether a forced refresh for `scopes` was made within the interval (the budget is spent).
    public func isSpent(_ scopes: [String]) -> Bool {
        let key = Self.key(scopes)
        let now = POSIX.monotonicMilliseconds()
        return last.withLock { $0[key].map { now - $0 < milliseconds } ?? false }
    }

    /// Records a forced refresh for `scopes` now.
    public func spend(_ scopes: [String]) {
        let key = Self.key(scopes)
        let now = POSIX.monotonicMilliseconds()
        last.withLock { table in
            table = table.filter { now - $0.value < milliseconds }  // what no longer counts goes
            table[key] = now
        }
    }

    /// Takes the budget for `scopes` when it is not spent: `true` (and recorded), else `false`.
    public func take(_ scopes: [String]) -> Bool {
        let key = Self.key(scopes)
        let now = POSIX.monotonicMilliseconds()
        return last.withLock { table in
            if let at = table[key], now - at < milliseconds { return false }
            table[key] = now
            return true
        }
    }

    private var milliseconds: Int64 {
        let (seconds, attoseconds) = interval.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// A token's key: its scopes, case and order ignored.
    private static func key(_ scopes: [String]) -> String {
        scopes.map { $0.lowercased() }.sorted().joined(separator: " ")
    }
}
