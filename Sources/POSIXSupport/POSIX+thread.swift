#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension POSIX {
    /// Starts a detached POSIX thread running `body`, for the loops that block (the output
    /// writer, the signal waiter, a connection's server, the redirect listener's poll loop).
    ///
    /// - Throws: ``POSIXError`` (`pthread_create`) when the system cannot create a thread;
    ///   `body` then never runs.
    public static func startThread(_ body: @escaping @Sendable () -> Void) throws(POSIXError) {
        final class Box {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
                box.body()
                return nil
            }, box)
        guard created == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw POSIXError("pthread_create", code: created)
        }
        pthread_detach(thread)
    }
}
