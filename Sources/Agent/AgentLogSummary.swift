import Logging
import Loopback

/// The forward socket's audit log (``ForwardSessionPolicy``'s lines: tokens handed out, refused
/// requests, sign-ins asked) through the agent's ``LogSummary``: the first line of a kind per
/// peer and details (the scopes, the method; not the time) in an interval goes out as it is,
/// the repeats are counted into the summary's line a minute. So the audit still names every
/// scope that left, without a line per token.
struct SummarizedLogHandler: LogHandler {
    let summary: LogSummary
    var inner: any LogHandler

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        let metadata = event.metadata ?? [:]
        let peer = metadata["peer"].map { "\($0)" } ?? "a forwarded session"
        let detail = metadata.filter { $0.key != "peer" && $0.key != "time" }.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        if summary.count("\(event.message)", peer: peer, detail: detail.isEmpty ? nil : detail, level: event.level) {
            inner.log(event: event)
        }
    }
}

extension Logger {
    /// This logger, its lines said through `summary` (``SummarizedLogHandler``).
    func summarized(by summary: LogSummary) -> Logger {
        var logger = self
        logger.handler = SummarizedLogHandler(summary: summary, inner: handler)
        return logger
    }
}
