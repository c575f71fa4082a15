/// The limits every local endpoint applies (``AcceptLoop``, ``LoopbackHTTPServer``), so a
/// local stranger cannot hold the endpoint: one value, set once per endpoint.
public struct ServerLimits: Sendable, Equatable {
    /// What happens to a new connection when ``maxConnections`` are open.
    public enum AtCapacity: Sendable, Equatable {
        /// The new connection gets the endpoint's refusal and is closed.
        case refuseNew
        /// The oldest connection still waiting for its request is closed to make room (a
        /// connection whose request is being answered is never closed); failing that, the
        /// session idle the longest (``AcceptLoop/Connection/track(_:)``); when there is none,
        /// the new one is refused. Slow-loris connections then cannot starve real clients.
        case evictOldestWaiting
    }

    /// The most connections open at once.
    public var maxConnections: Int
    public var atCapacity: AtCapacity
    /// From accept to the whole request (HTTP: head and body; the agent: its first byte).
    /// A connection that sends one byte at a time is closed when this runs out.
    public var requestDeadline: Duration
    /// How long `accept` rests when the process is out of descriptors (EMFILE/ENFILE), so
    /// the loop does not spin on a listening socket that stays readable.
    public var acceptBackoff: Duration
    /// HTTP endpoints: the largest request body (413 above it).
    public var maxRequestBody: Int
    /// Descriptors kept free for the rest of the process (the cache, libcurl, the concurrency
    /// runtime): a connection accepted on a descriptor closer than this to the process's
    /// limit counts as one over ``maxConnections`` (evicts or is refused).
    public var descriptorReserve: Int
    /// A tracked session (``AcceptLoop/Connection/track(_:)``) idle this long (nothing in
    /// flight, not ``SessionActivity/held``) is closed; `nil`: never.
    public var idleLimit: Duration?
    /// The most connections one peer process (`SO_PEERCRED`'s pid) may hold at once; at its
    /// share, a new connection of the same peer makes room among that peer's own (waiting,
    /// idle, then kept), else is refused. `nil`: no share (the cap alone). For a socket one
    /// process relays for others (`ssh -R` to the agent's forward socket).
    public var perPeerShare: Int?

    public init(
        maxConnections: Int, atCapacity: AtCapacity, requestDeadline: Duration,
        acceptBackoff: Duration = .milliseconds(100), maxRequestBody: Int = 16 * 1024, descriptorReserve: Int = 16,
        idleLimit: Duration? = nil, perPeerShare: Int? = nil
    ) {
        self.maxConnections = maxConnections
        self.atCapacity = atCapacity
        self.requestDeadline = requestDeadline
        self.acceptBackoff = acceptBackoff
        self.maxRequestBody = maxRequestBody
        self.descriptorReserve = descriptorReserve
        self.idleLimit = idleLimit
        self.perPeerShare = perPeerShare
    }

    /// `wanted`, or fewer when the descriptor limit (`RLIMIT_NOFILE`, soft) minus `reserve`
    /// leaves room for fewer; at least 1.
    public static func connections(_ wanted: Int, descriptorLimit: Int, reserve: Int) -> Int {
        max(1, min(wanted, descriptorLimit - reserve))
    }
}

extension Duration {
    /// Whole milliseconds (rounded down), for `poll` and the monotonic clock.
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

/// What a tracked connection is doing, as its server sees it (``AcceptLoop/Connection/track(_:)``).
public enum SessionActivity: Sendable, Equatable {
    /// No complete message yet: closed at the request deadline, evicted first.
    case waiting
    /// Something in flight (a request, a question to the client): never closed.
    case held
    /// Nothing in flight since this moment (``POSIX/monotonicMilliseconds()``).
    case idle(since: Int64)
    /// Nothing in flight since this moment, in a session its client keeps (an editor, a client
    /// library that sent `initialize`: it may wait hours for its next request): never closed
    /// for being idle, but at the cap the idlest makes room after the waiting and idle ones
    /// (its client reconnects), so sessions that say nothing cannot lock the endpoint.
    case kept(since: Int64)
}
