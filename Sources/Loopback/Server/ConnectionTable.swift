import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The connections an ``AcceptLoop`` has open, in accept order, and which of them can be
/// closed to make room: those still waiting for their request, then tracked sessions that are
/// idle, then kept sessions idle the longest (``SessionActivity``); with a per-peer share
/// (``ServerLimits/perPeerShare``), a peer at its share makes room among its own first. Shared by the accept thread and every connection's thread,
/// behind one lock.
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
        let acceptedAt: Int64
        /// The peer process (its pid), when the limits keep a per-peer share.
        let peer: Int32?
        var waiting = true
        /// The session's own account of what it does, once it has one (see ``track(_:_:)``).
        var activity: (@Sendable () -> SessionActivity)?

        /// What it does now (under the table's lock: `activity` must not take it).
        var now: SessionActivity {
            if let activity { return activity() }
            return waiting ? .waiting : .held
        }
    }

    /// Why a connection was closed by the table.
    enum Closing: Sendable {
        /// Made room for a new connection at the cap.
        case evicted
        /// No complete request within the deadline.
        case late
        /// Idle longer than the idle limit.
        case idle
    }

    private struct State {
        var entries: [Entry] = []
        var nextID = 0
    }

    private let state = PthreadMutex(State())

    /// Connections open now.
    var count: Int { state.withLock { $0.entries.count } }

    /// Adds `fd` when there is room (evicting per `atCapacity`); nil when the cap is reached.
    /// `full`: the process's descriptors are short, so this one counts as over the cap.
    /// `peer`: the peer process, for ``ServerLimits/perPeerShare``.
    func admit(_ fd: Int32, limits: ServerLimits, full: Bool = false, peer: Int32? = nil, closed: (Int32, Closing) -> Void) -> Int? {
        state.withLock { state in
            let peer = limits.perPeerShare == nil ? nil : peer
            if let share = limits.perPeerShare, let peer, state.entries.count(where: { $0.peer == peer }) >= max(1, share) {
                guard limits.atCapacity == .evictOldestWaiting, let victim = Self.victim(in: state.entries, of: peer) else { return nil }
                Self.evict(victim, &state, closed)
            } else if full || state.entries.count >= limits.maxConnections {
                guard limits.atCapacity == .evictOldestWaiting, let victim = Self.victim(in: state.entries) else { return nil }
                Self.evict(victim, &state, closed)
            }
            defer { state.nextID += 1 }
            state.entries.append(Entry(id: state.nextID, fd: fd, acceptedAt: POSIX.monotonicMilliseconds(), peer: peer))
            return state.nextID
        }
    }

    private static func evict(_ victim: Int, _ state: inout State, _ closed: (Int32, Closing) -> Void) {
        closed(state.entries[victim].fd, .evicted)
        // Its thread sees end of stream or an error, answers nothing more, and removes it.
        shutdown(state.entries[victim].fd, Int32(SHUT_RDWR))
        state.entries.remove(at: victim)
    }

    /// The oldest connection still waiting for its request, else the session idle the longest,
    /// else the kept session idle the longest; never one with something in flight. `peer`:
    /// among that peer's connections only.
    private static func victim(in entries: [Entry], of peer: Int32? = nil) -> Int? {
        var idlest: (index: Int, since: Int64)?
        var idlestKept: (index: Int, since: Int64)?
        for (index, entry) in entries.enumerated() where peer == nil || entry.peer == peer {
            switch entry.now {
            case .waiting: return index
            case .held: continue
            case .idle(let since): if since < idlest?.since ?? .max { idlest = (index, since) }
            case .kept(let since): if since < idlestKept?.since ?? .max { idlestKept = (index, since) }
            }
        }
        return idlest?.index ?? idlestKept?.index
    }

    /// The connection's request is in: it is no longer evicted.
    func markAnswering(_ id: Int) {
        state.withLock { state in
            if let index = state.entries.firstIndex(where: { $0.id == id }) { state.entries[index].waiting = false }
        }
    }

    /// From now on the connection says itself what it does (it must not call into the table).
    func track(_ id: Int, _ activity: @escaping @Sendable () -> SessionActivity) {
        state.withLock { state in
            if let index = state.entries.firstIndex(where: { $0.id == id }) { state.entries[index].activity = activity }
        }
    }

    /// Closes the tracked sessions past their deadline: no complete message within
    /// `requestDeadline` of accept, or idle longer than `idleLimit`.
    func sweep(limits: ServerLimits, closed: (Int32, Closing) -> Void) {
        let now = POSIX.monotonicMilliseconds()
        let deadline = limits.requestDeadline.wholeMilliseconds
        let idleLimit = limits.idleLimit?.wholeMilliseconds
        state.withLock { state in
            state.entries.removeAll { entry in
                guard entry.activity != nil else { return false }
                let reason: Closing
                switch entry.now {
                case .waiting where now - entry.acceptedAt >= deadline: reason = .late
                case .idle(let since) where idleLimit.map({ now - since >= $0 }) ?? false: reason = .idle
                default: return false
                }
                closed(entry.fd, reason)
                shutdown(entry.fd, Int32(SHUT_RDWR))
                return true
            }
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
