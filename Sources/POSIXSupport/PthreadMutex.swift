#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value behind a `pthread_mutex_t`, with a condition to wait on, for state shared with
/// POSIX threads of our own (the loopback servers' connection threads) or with tasks that
/// ThreadSanitizer must see synchronise (the test doubles of AuthTestSupport).
///
/// Why not `Synchronization.Mutex`: on Linux its contended paths are priority-inheriting
/// futex calls inside the (uninstrumented) standard library, so ThreadSanitizer sees neither
/// the lock nor the unlock and reports the guarded accesses as races. It intercepts
/// `pthread_mutex_lock` and `pthread_cond_*`, so a lock made of them keeps the
/// ThreadSanitizer suite (`scripts/test.sh`) meaningful for these threads.
///
/// The methods are `@inlinable`: specialized where they are called, a `withLock` returning
/// an optional needs no `Optional<T>` metadata made at run time (a fresh process made one per
/// result type before answering its first request).
public final class PthreadMutex<Value>: @unchecked Sendable {
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    @usableFromInline let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Guarded by `mutex`: read and written only inside `withLock`.
    @usableFromInline var value: Value

    public init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    @inlinable
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` with the lock held, waking every ``wait(until:for:)`` to look again.
    @inlinable
    public func withLockAndBroadcast<T>(_ body: (inout Value) -> T) -> T {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return body(&value)
    }

    /// Waits, lock released, until `answer` gives a result or the monotonic clock passes
    /// `deadline` (milliseconds, as `POSIX.monotonicMilliseconds()`); nil then.
    @inlinable
    public func wait<T>(until deadline: Int64, for answer: (inout Value) -> T?) -> T? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var limit = timespec(tv_sec: Int(deadline / 1000), tv_nsec: Int(deadline % 1000) * 1_000_000)
        while true {
            if let result = answer(&value) { return result }
            if pthread_cond_timedwait(condition, mutex, &limit) == ETIMEDOUT { return answer(&value) }
        }
    }
}
