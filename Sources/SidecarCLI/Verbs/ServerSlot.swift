import Synchronization

/// A long-running endpoint's stop, for the signal thread: a stop that comes before the server
/// is installed is kept, and the server is then stopped as soon as it is.
final class ServerSlot: Sendable {
    private let state = Mutex<(stop: (@Sendable () -> Void)?, stopped: Bool)>((nil, false))

    func stop() {
        state.withLock { state in
            state.stopped = true
            state.stop?()
        }
    }

    /// Keeps the server's stop; false when a stop came first.
    func install(_ stop: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            state.stop = stop
            return !state.stopped
        }
    }
}
