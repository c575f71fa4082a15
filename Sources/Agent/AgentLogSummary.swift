import Logging
import Loopback
import POSIXSupport

extension LogSummary {
    private static let agentSummary = PthreadMutex<LogSummary?>(nil)

    /// The agent's summary of repeated events (refusals, evictions, forwarded sessions and
    /// the forward socket's audit): one per process, made with the first `logger` asked with,
    /// so a forwarded session finds the agent's without being handed it; flushed by the
    /// agent's accept loops.
    static func agent(_ logger: Logger) -> LogSummary {
        agentSummary.withLock { summary in
            if let summary { return summary }
            let made = LogSummary(logger: logger)
            summary = made
            return made
        }
    }
}
