#if canImport(Glibc)
    import Glibc
#endif

/// The current time in Unix seconds, and waiting (a seam: tests move it, and their waits
/// return at once).
public protocol AuthClock: Sendable {
    func now() -> Int64
    /// Waits `duration`; throws `CancellationError` when the task is cancelled.
    /// The default is `Task.sleep`.
    func sleep(for duration: Duration) async throws
}

extension AuthClock {
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

/// The system's real-time clock; waits with `Task.sleep`.
public struct SystemClock: AuthClock {
    public init() {}
    public func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }
}
