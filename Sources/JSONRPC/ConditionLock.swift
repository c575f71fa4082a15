#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutex with a condition variable, for the few places that park a real thread
/// (the output writer, waiting for in-flight requests at exit).
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` holding the lock.
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// With the lock held: waits until `ready()` is true; returns false if `timeoutSeconds`
    /// passed first.
    @discardableResult
    func wait(until ready: () -> Bool, timeoutSeconds: Double? = nil) -> Bool {
        guard let timeoutSeconds else {
            while !ready() { pthread_cond_wait(condition, mutex) }
            return true
        }
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanos = Int(deadline.tv_nsec) + Int(timeoutSeconds.truncatingRemainder(dividingBy: 1) * 1e9)
        deadline.tv_sec += Int(timeoutSeconds) + nanos / 1_000_000_000
        deadline.tv_nsec = nanos % 1_000_000_000
        while !ready() {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { return ready() }
        }
        return true
    }

    /// Wakes every waiter (call with or without the lock held).
    func broadcast() { pthread_cond_broadcast(condition) }
}
