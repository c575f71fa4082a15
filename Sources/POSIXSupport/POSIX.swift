#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The POSIX calls several modules need, written once: error text, the monotonic clock,
/// a detached thread, writing and reading a descriptor whole (`POSIX+*.swift`).
///
/// No sockets here (those are `Loopback`'s) and no C library but the system's.
public enum POSIX {
    /// `strerror(code)` as a String.
    public static func errorString(_ code: Int32) -> String {
        guard let message = strerror(code) else { return "errno \(code)" }
        return String(cString: message)
    }

    /// The text of the current `errno`.
    public static var lastErrorString: String { errorString(errno) }

    /// Milliseconds of the monotonic clock.
    public static func monotonicMilliseconds() -> Int64 {
        let now = monotonicTime()
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Milliseconds of the real-time clock since the epoch (what processes compare).
    public static func realTimeMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// Nanoseconds of the monotonic clock.
    public static func monotonicNanoseconds() -> UInt64 {
        let now = monotonicTime()
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Seconds of the monotonic clock.
    public static func monotonicSeconds() -> Double {
        let now = monotonicTime()
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    private static func monotonicTime() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now
    }
}

/// A POSIX call that failed: which one, and its error number.
public struct POSIXError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call, e.g. `read` or `pthread_create`.
    public let call: String
    /// The error number (`errno`, or what the call returned).
    public let code: Int32

    public init(_ call: String, code: Int32 = errno) {
        self.call = call
        self.code = code
    }

    /// `call: strerror(code)`, e.g. `read: Bad file descriptor`.
    public var description: String { "\(call): \(POSIX.errorString(code))" }
}
