import Synchronization
import Testing

@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// The refresh lock between processes (open-file-description record locks on one file).
@Suite struct RefreshLockTests {
    /// Runs two holders of `keys.0` and `keys.1`, B starting once A holds its lock; returns
    /// the order of "start A", "end A", "start B", "end B". A holds its lock for 400 ms, or,
    /// with `aWaitsForB`, until B has finished (at most 10 s): no timing decides the order.
    private func order(_ keys: (String, String), timeout: Duration = .seconds(10), aWaitsForB: Bool = false) async throws -> [String] {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let events = Events()
        let lock = FileRefreshLock(path: temp.path + "/cache.json.refresh.lock")
        let other = FileRefreshLock(path: temp.path + "/cache.json.refresh.lock")  // another "process"
        async let first: Void = lock.withLock(key: keys.0, timeout: timeout) {
            events.add("start A")
            if aWaitsForB {
                for _ in 0..<1000 where !events.has("end B") { try await Task.sleep(for: .milliseconds(10)) }
            } else {
                try await Task.sleep(for: .milliseconds(400))
            }
            events.add("end A")
        }
        while !events.has("start A") { try await Task.sleep(for: .milliseconds(5)) }
        try await other.withLock(key: keys.1, timeout: timeout) {
            events.add("start B")
            events.add("end B")
        }
        try await first
        return events.all
    }

    @Test func theSameKeyWaitsForTheHolder() async throws {
        #expect(try await order(("k", "k")) == ["start A", "end A", "start B", "end B"])
    }

    @Test func otherKeysDoNotWait() async throws {
        let (a, b) = ("key-a", "key-b")
        #expect(FileRefreshLock.region(for: a).l_start != FileRefreshLock.region(for: b).l_start)
        #expect(try await order((a, b), aWaitsForB: true) == ["start A", "start B", "end B", "end A"])
    }

    @Test func aStuckHolderDelaysOnlyUntilTheTimeout() async throws {
        #expect(try await order(("k", "k"), timeout: .milliseconds(50), aWaitsForB: true) == ["start A", "start B", "end B", "end A"])
    }

    @Test func theLockFileIsCreated0600AndNeverFollowsASymlink() async throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/x.refresh.lock"
        try await FileRefreshLock(path: path).withLock(key: "k", timeout: .seconds(1)) {}
        #expect(mode(of: path) == 0o600)
        let target = temp.path + "/target"
        let link = temp.path + "/link.lock"
        symlink(target, link)
        try await FileRefreshLock(path: link).withLock(key: "k", timeout: .seconds(1)) {}
        #expect(access(target, F_OK) != 0, "the symlink's target was not created")
    }
}

/// Events recorded from several tasks.
private final class Events: Sendable {
    private let list = Mutex<[String]>([])
    func add(_ event: String) { list.withLock { $0.append(event) } }
    func has(_ event: String) -> Bool { list.withLock { $0.contains(event) } }
    var all: [String] { list.withLock { $0 } }
}
