/// The one rule for riding out a flaky network, for every call to the token endpoint: which
/// failures are worth another try, how long to wait before it, and when to give up.
///
/// Transient: no answer (a connection refused or reset, a time-out) and HTTP 429 or 5xx,
/// whatever the body says. Each one in a row doubles the wait (from the interval, at most the
/// budget's `maxBackoffSeconds`), and a `Retry-After` asks for at least that long; the caller
/// gives up with the error when the budget's tries are spent, when a `Retry-After` asks for
/// longer than the budget allows, or on any other failure. Two budgets:
/// - ``Budget/oneShot``: a single redemption (refresh token, authorization code, device code
///   request): 3 attempts in all, waits of 1 then 2 s, a `Retry-After` up to 10 s. A time-out
///   is not tried again: it has used up the request's time limit.
/// - ``Budget/polling``: device code polling, whose own deadline (the code's expiry) bounds
///   it: 8 failures in a row, waits from the polling interval up to 60 s, a `Retry-After`
///   up to a day (the loop also stops when the wait would outlive the code).
///
/// ```swift
/// var retry = TransientRetry(.oneShot)
/// guard let wait = retry.delay(after: error, interval: 1) else { throw error }
/// ```
struct TransientRetry: Sendable {
    /// How much retrying a caller affords.
    struct Budget: Sendable {
        /// Transient failures in a row tolerated; the next one is the caller's error.
        var maxConsecutiveFailures: Int
        /// The longest wait computed by doubling.
        var maxBackoffSeconds: Int64
        /// A longer `Retry-After` ends the retries (the error carries it for the caller).
        var maxRetryAfterSeconds: Int
        /// Whether a time-out is tried again.
        var retriesTimeouts: Bool

        static let oneShot = Budget(maxConsecutiveFailures: 2, maxBackoffSeconds: 4, maxRetryAfterSeconds: 10, retriesTimeouts: false)
        static let polling = Budget(maxConsecutiveFailures: 8, maxBackoffSeconds: 60, maxRetryAfterSeconds: 86_400, retriesTimeouts: true)
    }

    let budget: Budget
    /// Transient failures since the last real answer.
    private(set) var consecutiveFailures = 0

    init(_ budget: Budget) {
        self.budget = budget
    }

    /// Whether another attempt may succeed where this one failed.
    static func isTransient(_ error: AuthError) -> Bool {
        if let status = error.httpStatus { return status == 429 || (500...599).contains(status) }
        return error.oauthError == nil && (error.kind == .networkError || error.kind == .timeout)
    }

    /// The seconds to wait before trying again, or `nil` to give up with `error`.
    mutating func delay(after error: AuthError, interval: Int64) -> Int64? {
        guard Self.isTransient(error), consecutiveFailures < budget.maxConsecutiveFailures,
            budget.retriesTimeouts || error.kind != .timeout,
            (error.retryAfter ?? 0) <= budget.maxRetryAfterSeconds
        else { return nil }
        consecutiveFailures += 1
        let base = min(max(interval, 1), budget.maxBackoffSeconds)
        let backoff = min(base << min(consecutiveFailures - 1, 16), budget.maxBackoffSeconds)
        return max(backoff, Int64(max(error.retryAfter ?? 0, 0)))
    }

    /// The service answered (even "not yet"): the next failure starts a new run.
    mutating func answered() { consecutiveFailures = 0 }
}
