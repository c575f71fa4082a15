#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing
@testable import TokenCache

/// The refresh lock between processes (open-file-description record locks on one file).
@Suite struct RefreshLockTests {
    /// Runs two holders of `keys.0` and `keys.1` that start in this order; returns the order of
    /// the events "start A", "end A", "start B", "end B".
    private func order(_ keys: (String, String), timeout: Duration = .seconds(10)) async throws -> [String] {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let events = Mutex<[String]>([])
        let lock = FileRefreshLock(path: temp.path + "/cache.json.refresh.lock")
        let other = FileRefreshLock(path: temp.path + "/cache.json.refresh.lock")  // another "process"
        async let first: Void = lock.withLock(key: keys.0, timeout: timeout) {
            events.withLock { $0.append("start A") }
            try await Task.sleep(for: .milliseconds(400))
            events.withLock { $0.append("end A") }
        }
        try await Task.sleep(for: .milliseconds(100))
        try await other.withLock(key: keys.1, timeout: timeout) {
            events.withLock { $0.append("start B") }
            events.withLock { $0.append("end B") }
        }
        try await first
        return events.withLock { $0 }
    }

    @Test func theSameKeyWaitsForTheHolder() async throws {
        #expect(try await order(("k", "k")) == ["start A", "end A", "start B", "end B"])
    }

    @Test func otherKeysDoNotWait() async throws {
        let (a, b) = ("key-a", "key-b")
        #expect(FileRefreshLock.region(for: a).l_start != FileRefreshLock.region(for: b).l_start)
        #expect(try await order((a, b)) == ["start A", "start B", "end B", "end A"])
    }

    @Test func aStuckHolderDelaysOnlyUntilTheTimeout() async throws {
        #expect(try await order(("k", "k"), timeout: .milliseconds(50)) == ["start A", "start B", "end B", "end A"])
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
