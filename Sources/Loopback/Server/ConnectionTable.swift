import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The connections an ``AcceptLoop`` has open, in accept order, and which of them are still
/// waiting for their request (evictable). Shared by the accept thread and every connection's
/// thread, behind one lock.
///
/// The lock is a ``PthreadMutex`` so the ThreadSanitizer suite sees it (see there).
///
/// A connection's descriptor is closed only by its own thread, after ``remove(_:)``; eviction
/// (`shutdown`) happens under the lock while the entry is present, so it never reaches a
/// descriptor number the system has given to someone else.
final class ConnectionTable: Sendable {
    private struct Entry {
        let id: Int
        let fd: Int32
        var waiting = true
    }

    private struct State {
        var entries: [Entry] = []
        var nextID = 0
    }

    private let state = PthreadMutex(State())

    /// Connections open now.
    var count: Int { state.withLock { $0.entries.count } }

    /// Adds `fd` when there is room (evicting per `atCapacity`); nil when the cap is reached.
    func admit(_ fd: Int32, limits: ServerLimits) -> Int? {
        state.withLock { state in
            if state.entries.count >= limits.maxConnections {
                guard limits.atCapacity == .evictOldestWaiting, let victim = state.entries.firstIndex(where: \.waiting) else {
                    return nil
                }
                // Its thread sees end of stream or an error, answers nothing more, and removes it.
                shutdown(state.entries[victim].fd, Int32(SHUT_RDWR))
                state.entries.remove(at: victim)
            }
            defer { state.nextID += 1 }
            state.entries.append(Entry(id: state.nextID, fd: fd))
            return state.nextID
        }
    }

    /// The connection's request is in: it is no longer evicted.
    func markAnswering(_ id: Int) {
        state.withLock { state in
            if let index = state.entries.firstIndex(where: { $0.id == id }) { state.entries[index].waiting = false }
        }
    }

    /// Forgets the connection (before its thread closes the descriptor).
    func remove(_ id: Int) {
        state.withLock { $0.entries.removeAll { $0.id == id } }
    }

    /// Stops every connection's reading (`shutdown(SHUT_RD)`): requests in flight still answer.
    func shutDownReading() {
        state.withLock { state in
            for entry in state.entries { shutdown(entry.fd, Int32(SHUT_RD)) }
        }
    }
}
