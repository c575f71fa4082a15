#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value behind a `pthread_mutex_t`, for state shared with a POSIX thread of our own (the
/// serving thread of ``RedirectExchange``).
///
/// Why not `Synchronization.Mutex`: on Linux its contended paths are priority-inheriting
/// futex calls inside the (uninstrumented) standard library, so ThreadSanitizer sees neither
/// the lock nor the unlock and reports the guarded accesses as races. It intercepts
/// `pthread_mutex_lock`, so a lock made of one keeps the ThreadSanitizer suite
/// (`scripts/test.sh`) meaningful for this thread.
final class PthreadMutex<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Guarded by `mutex`: read and written only inside `withLock`.
    private var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
