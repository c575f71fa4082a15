import AuthCore
import AuthSeams
import POSIXSupport

/// A clock the test moves.
/// Its `sleep` returns at once, moving the time by the duration (rounded up to seconds)
/// and recording it.
public final class ManualClock: AuthClock {
    private let current: PthreadMutex<Int64>
    private let slept = PthreadMutex<[Duration]>([])
    public init(_ start: Int64 = 1_700_000_000) { current = PthreadMutex(start) }
    public func now() -> Int64 { current.withLock { $0 } }
    public func advance(_ seconds: Int64) { current.withLock { $0 += seconds } }

    /// Every duration `sleep` was asked for, in order.
    public var sleeps: [Duration] { slept.withLock { $0 } }

    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        slept.withLock { $0.append(duration) }
        let (seconds, attoseconds) = duration.components
        advance(seconds + (attoseconds > 0 ? 1 : 0))
        await Task.yield()
    }
}
