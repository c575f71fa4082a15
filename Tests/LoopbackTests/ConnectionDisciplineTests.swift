import Logging
import POSIXSupport
import Testing

@testable import Loopback

#if canImport(Glibc)
    import Glibc
#endif

/// Which connection makes room at the cap, which ones the sweep closes, and how repeated
/// events are logged: the rules the agent's sockets keep under load (issue 41).
@Suite struct ConnectionDisciplineTests {
    /// A connected socket pair: the table's end, and the peer's (which sees the shutdown).
    private func pair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
        return (fds[0], fds[1])
    }

    private func closedByTable(_ peer: Int32) -> Bool {
        var byte: UInt8 = 0
        var poller = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0 && recv(peer, &byte, 1, Int32(MSG_DONTWAIT)) == 0
    }

    @Test func atTheCapTheWaitingGoFirstThenTheIdlestAndNeverTheHeld() {
        let table = ConnectionTable()
        let limits = ServerLimits(maxConnections: 3, atCapacity: .evictOldestWaiting, requestDeadline: .seconds(30))
        let (held, heldPeer) = pair()
        let (idleOld, idleOldPeer) = pair()
        let (idleNew, idleNewPeer) = pair()
        var reasons: [ConnectionTable.Closing] = []
        for (fd, activity) in [(held, SessionActivity.held), (idleOld, .idle(since: 100)), (idleNew, .idle(since: 200))] {
            let id = table.admit(fd, limits: limits) { _, reason in reasons.append(reason) }
            table.track(id ?? -1) { activity }
        }
        let (waiting, waitingPeer) = pair()
        // Full: the idlest session makes room, then the newcomer (still waiting) for the next.
        #expect(table.admit(waiting, limits: limits) { _, reason in reasons.append(reason) } != nil)
        #expect(closedByTable(idleOldPeer) && !closedByTable(idleNewPeer) && !closedByTable(heldPeer))
        let (next, nextPeer) = pair()
        #expect(table.admit(next, limits: limits) { _, reason in reasons.append(reason) } != nil)
        #expect(closedByTable(waitingPeer) && !closedByTable(idleNewPeer))
        #expect(reasons == [.evicted, .evicted] && table.count == 3)
        // Short of descriptors counts as full, even below the cap: the waiting one goes.
        let (another, _) = pair()
        let roomy = ServerLimits(maxConnections: 10, atCapacity: .evictOldestWaiting, requestDeadline: .seconds(30))
        #expect(table.admit(another, limits: roomy, full: true) { _, _ in } != nil)
        #expect(closedByTable(nextPeer) && !closedByTable(idleNewPeer) && !closedByTable(heldPeer) && table.count == 3)
    }

    /// Issue 47, finding 9: initialized sessions with nothing in flight (kept) do not lock the
    /// cap: the idlest makes room after waiting and idle ones; the busy never; the sweep leaves
    /// kept ones alone.
    @Test func atTheCapTheIdlestKeptSessionMakesRoomAfterTheIdleOnes() {
        let table = ConnectionTable()
        let limits = ServerLimits(
            maxConnections: 3, atCapacity: .evictOldestWaiting, requestDeadline: .seconds(30), idleLimit: .milliseconds(1))
        let (held, heldPeer) = pair()
        let (keptOld, keptOldPeer) = pair()
        let (idle, idlePeer) = pair()
        for (fd, activity) in [(held, SessionActivity.held), (keptOld, .kept(since: 100)), (idle, .idle(since: 300))] {
            let id = table.admit(fd, limits: limits) { _, _ in }
            table.track(id ?? -1) { activity }
        }
        let (first, _) = pair()
        #expect(table.admit(first, limits: limits) { _, _ in } != nil)
        #expect(closedByTable(idlePeer) && !closedByTable(keptOldPeer) && !closedByTable(heldPeer))
        table.remove(3)  // the newcomer leaves
        let (keptNew, keptNewPeer) = pair()
        let id = table.admit(keptNew, limits: limits) { _, _ in }
        table.track(id ?? -1) { .kept(since: 200) }
        usleep(5_000)
        table.sweep(limits: limits) { _, _ in }
        #expect(!closedByTable(keptOldPeer) && !closedByTable(keptNewPeer), "kept sessions are not closed for being idle")
        let (second, _) = pair()
        #expect(table.admit(second, limits: limits) { _, _ in } != nil)
        #expect(closedByTable(keptOldPeer) && !closedByTable(keptNewPeer) && !closedByTable(heldPeer))
        // Only busy sessions left: refused.
        let busy = ServerLimits(maxConnections: 1, atCapacity: .evictOldestWaiting, requestDeadline: .seconds(30))
        let lone = ConnectionTable()
        let (a, _) = pair()
        lone.track(lone.admit(a, limits: busy) { _, _ in } ?? -1) { .held }
        let (b, _) = pair()
        #expect(lone.admit(b, limits: busy) { _, _ in } == nil)
    }

    @Test func aPeerAtItsShareMakesRoomAmongItsOwn() {
        let table = ConnectionTable()
        let limits = ServerLimits(maxConnections: 10, atCapacity: .evictOldestWaiting, requestDeadline: .seconds(30), perPeerShare: 2)
        let (other, otherPeer) = pair()
        table.track(table.admit(other, limits: limits, peer: 7) { _, _ in } ?? -1) { .idle(since: 1) }
        let (mine1, mine1Peer) = pair()
        table.track(table.admit(mine1, limits: limits, peer: 9) { _, _ in } ?? -1) { .kept(since: 50) }
        let (mine2, mine2Peer) = pair()
        table.track(table.admit(mine2, limits: limits, peer: 9) { _, _ in } ?? -1) { .kept(since: 60) }
        let (mine3, _) = pair()
        #expect(table.admit(mine3, limits: limits, peer: 9) { _, _ in } != nil)
        #expect(closedByTable(mine1Peer) && !closedByTable(mine2Peer) && !closedByTable(otherPeer), "its own idlest, not another's idler one")
        #expect(table.count == 3)
    }

    @Test func theSweepClosesLateAndIdleSessionsOnly() {
        let table = ConnectionTable()
        let limits = ServerLimits(
            maxConnections: 8, atCapacity: .evictOldestWaiting, requestDeadline: .milliseconds(50), idleLimit: .milliseconds(50))
        let now = POSIX.monotonicMilliseconds()
        let cases: [(SessionActivity, Bool)] = [
            (.waiting, true), (.idle(since: now - 1000), true), (.idle(since: now + 60_000), false), (.held, false),
        ]
        var peers: [(Int32, Bool)] = []
        for (activity, closes) in cases {
            let (fd, peer) = pair()
            let id = table.admit(fd, limits: limits) { _, _ in }
            table.track(id ?? -1) { activity }
            peers.append((peer, closes))
        }
        usleep(80_000)
        var reasons: [ConnectionTable.Closing] = []
        table.sweep(limits: limits) { _, reason in reasons.append(reason) }
        #expect(peers.map { closedByTable($0.0) } == peers.map(\.1))
        #expect(reasons == [.late, .idle] && table.count == 2)
    }

    @Test func repeatedEventsAreSaidOnceAPeerThenCounted() {
        let capture = LineCapture()
        let summary = LogSummary(logger: Logger(label: "test") { _ in LineCapture.Handler(capture: capture) }, interval: .seconds(3600))
        for _ in 0..<50 { summary.record("refused", peer: "pid 1") }
        summary.record("refused", peer: "pid 2")
        for scopes in ["A", "B", "A", "A", "B"] { summary.record("handed out", peer: "pid 1", detail: scopes) }
        summary.flushIfDue()  // the interval has not ended
        #expect(capture.lines.withLock { $0 } == ["refused pid 1", "refused pid 2", "handed out pid 1 A", "handed out pid 1 B"])
        summary.flush()
        let lines = capture.lines.withLock { $0 }
        #expect(lines.count == 6)
        #expect(lines[4].hasPrefix("refused: 49 more in the last"))
        #expect(lines[5].hasPrefix("handed out: 3 more") && lines[5].hasSuffix("A (2), B (1)"))
        summary.flush()
        #expect(capture.lines.withLock { $0 }.count == 6, "nothing more to say")
        summary.record("refused", peer: "pid 1")
        #expect(capture.lines.withLock { $0 }.count == 7, "a new interval says the first at once again")
    }
}

/// The message and the metadata's values of every line logged, in order.
private final class LineCapture: Sendable {
    let lines = PthreadMutex<[String]>([])

    struct Handler: LogHandler {
        let capture: LineCapture
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let values = (event.metadata ?? [:]).filter { $0.key != "count" }.sorted { $0.key > $1.key }.map { "\($0.value)" }
            capture.lines.withLock { $0.append(([event.message.description] + values).joined(separator: " ")) }
        }
    }
}
