/// How a polling loop rides out a flaky network: which failures are worth another try, and
/// how long to wait before it.
///
/// Transient: no answer (network failure, reset, time-out) and HTTP 429 or 5xx. Each one
/// in a row doubles the wait (from the polling interval, at most `maxBackoffSeconds`), and
/// a `Retry-After` asks for at least that long; after `maxConsecutiveFailures` in a row,
/// or any other failure, the caller gives up with the error.
///
/// ```swift
/// var retry = TransientRetry()
/// guard let wait = retry.delay(after: error, interval: 5) else { throw error }
/// ```
struct TransientRetry: Sendable {
    /// Transient failures in a row tolerated; the next one is the caller's error.
    var maxConsecutiveFailures = 8
    /// The longest backoff (a longer `Retry-After` is still honoured).
    var maxBackoffSeconds: Int64 = 60
    /// A longer `Retry-After` counts as this (a day): the caller's deadline decides.
    static let maxRetryAfterSeconds = 86_400
    /// Transient failures since the last real answer.
    private(set) var consecutiveFailures = 0

    /// Whether another attempt may succeed where this one failed.
    static func isTransient(_ error: AuthError) -> Bool {
        if let status = error.httpStatus { return status == 429 || (500...599).contains(status) }
        return error.oauthError == nil && (error.kind == .networkError || error.kind == .timeout)
    }

    /// The seconds to wait before trying again, or `nil` to give up with `error`.
    mutating func delay(after error: AuthError, interval: Int64) -> Int64? {
        guard Self.isTransient(error), consecutiveFailures < maxConsecutiveFailures else { return nil }
        consecutiveFailures += 1
        let base = min(max(interval, 1), maxBackoffSeconds)
        let backoff = min(base << min(consecutiveFailures - 1, 16), maxBackoffSeconds)
        return max(backoff, Int64(min(error.retryAfter ?? 0, Self.maxRetryAfterSeconds)))
    }

    /// The service answered (even "not yet"): the next failure starts a new run.
    mutating func answered() { consecutiveFailures = 0 }
}
