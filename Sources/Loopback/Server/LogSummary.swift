import Logging
import POSIXSupport

/// Log lines about repeated events (refused or evicted connections, tokens handed out through
/// the forward socket) said once per peer per interval, not once per event: the first event of
/// a kind from a peer in an interval (and the first with each new detail, e.g. another set of
/// scopes) is logged at once; repeats are counted and said in one line per peer and kind when
/// the interval ends (``flushIfDue()``, called by the accept loop's tick), with their count and
/// each detail's count.
///
/// A client retrying every 100 ms, or 200 clients of one process taking tokens, then log two
/// lines a minute instead of hundreds of thousands.
public final class LogSummary: Sendable {
    private struct Key: Hashable {
        let event: String
        let peer: String
    }

    private struct Tally {
        var count = 0
        /// The details logged at once this interval.
        var said: Set<String> = []
        /// Each repeated detail with its count, in first-seen order.
        var details: [(String, Int)] = []
        let level: Logger.Level
    }

    private struct State {
        var tallies: [Key: Tally] = [:]
        var order: [Key] = []
        var intervalStart = POSIX.monotonicMilliseconds()
    }

    private let logger: Logger
    private let intervalMilliseconds: Int64
    private let state = PthreadMutex(State())

    public init(logger: Logger, interval: Duration = .seconds(60)) {
        self.logger = logger
        intervalMilliseconds = max(1, interval.wholeMilliseconds)
    }

    /// Records one `event` from `peer` (`detail`: what to sum up, e.g. the scopes), logged at
    /// once when it is the first of its kind this interval.
    public func record(_ event: String, peer: String, detail: String? = nil, level: Logger.Level = .notice) {
        guard count(event, peer: peer, detail: detail, level: level) else { return }
        var metadata: Logger.Metadata = ["peer": "\(peer)"]
        if let detail { metadata["detail"] = "\(detail)" }
        logger.log(level: level, "\(event)", metadata: metadata)
    }

    /// Counts one `event` from `peer` without logging it; `true` when it is the first of its
    /// kind this interval, for the caller to log as it is.
    public func count(_ event: String, peer: String, detail: String? = nil, level: Logger.Level = .notice) -> Bool {
        let key = Key(event: event, peer: peer)
        let first: Bool = state.withLock { state in
            var tally = state.tallies[key] ?? Tally(level: level)
            if state.tallies[key] == nil { state.order.append(key) }
            defer { state.tallies[key] = tally }
            let said = detail ?? ""
            guard tally.said.contains(said) else {
                tally.said.insert(said)
                return true
            }
            tally.count += 1
            if let detail {
                if let index = tally.details.firstIndex(where: { $0.0 == detail }) {
                    tally.details[index].1 += 1
                } else {
                    tally.details.append((detail, 1))
                }
            }
            return false
        }
        return first
    }

    /// Says what was counted since the interval started, once it has run its length.
    public func flushIfDue() {
        flush(force: false)
    }

    /// Says what was counted, whether or not the interval has ended (at stop).
    public func flush(force: Bool = true) {
        let now = POSIX.monotonicMilliseconds()
        let (due, elapsed): ([(Key, Tally)], Int64) = state.withLock { state in
            let elapsed = now - state.intervalStart
            guard force || elapsed >= intervalMilliseconds else { return ([], elapsed) }
            defer { state = State(intervalStart: now) }
            return (state.order.compactMap { key in state.tallies[key].map { (key, $0) } }.filter { $0.1.count > 0 }, elapsed)
        }
        for (key, tally) in due {
            var metadata: Logger.Metadata = ["peer": "\(key.peer)", "count": "\(tally.count)"]
            if !tally.details.isEmpty {
                metadata["detail"] = "\(tally.details.map { "\($0.0) (\($0.1))" }.joined(separator: ", "))"
            }
            logger.log(level: tally.level, "\(key.event): \(tally.count) more in the last \((elapsed + 500) / 1000) s", metadata: metadata)
        }
    }
}
