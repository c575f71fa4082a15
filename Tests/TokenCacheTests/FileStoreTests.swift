import Dispatch
import JSON
import Testing

@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// The file store: permissions, atomic replace, locking, corrupt files, change detection.
@Suite struct FileStoreTests {
    let alice = Fixture.home("aaaaaaaa-0000-0000-0000-000000000001")

    @Test func createsDirectory0700AndFile0600AndLeavesNothingElse() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/a/b/cache.json"
        let cache = TokenCache(store: FileTokenCacheStore(path: path))
        #expect(try cache.read { $0.accountList() }.isEmpty)
        try cache.save(Fixture.record())
        #expect(mode(of: temp.path + "/a") == 0o700)
        #expect(mode(of: temp.path + "/a/b") == 0o700)
        #expect(mode(of: path) == 0o600)
        #expect(temp.entries(of: temp.path + "/a/b") == ["cache.json"])  // no temp file, no lock file
        // An existing file with looser permissions is replaced by a 0600 one.
        chmod(path, 0o644)
        try cache.setCurrentAccountId(alice, clientId: Fixture.client)
        #expect(mode(of: path) == 0o600)
        let reread = TokenCache(store: FileTokenCacheStore(path: path))
        #expect(try reread.currentAccountId(clientId: Fixture.client) == alice)
        #expect(
            try reread.read {
                $0.accessToken(
                    homeAccountId: alice, environments: [Fixture.env], realm: Fixture.tenant,
                    clientId: Fixture.client, scopes: ScopeSet(["User.Read"]), keyId: nil)
            }?.secret == "at-alice")
    }

    @Test func corruptFileIsReportedAndLeftUntouched() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        let garbage = Array(#"{"AccessToken": {"k": "#.utf8)
        writeBytes(path, garbage)
        let cache = TokenCache(store: FileTokenCacheStore(path: path))
        for attempt in 0..<2 {
            let error = #expect(throws: TokenCacheError.self) {
                if attempt == 0 { _ = try cache.read { $0.accountList() } } else { try cache.save(Fixture.record()) }
            }
            #expect(error?.code == .unreadable && error?.path == path)
        }
        #expect(readBytes(path) == garbage)
        #expect(temp.entries() == ["cache.json"])
        // Once repaired (here: emptied) by someone, the cache works again.
        writeBytes(path, [])
        try cache.save(Fixture.record())
        #expect(try cache.read { $0.accountList() }.count == 1)
    }

    @Test func reloadsOnlyWhenTheFileChangedAndReportsExternalChanges() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        let mine = FileTokenCacheStore(path: path)
        let cache = TokenCache(store: mine)
        let other = TokenCache(store: FileTokenCacheStore(path: path))  // "another process"
        try cache.save(Fixture.record())
        let before = try cache.changeToken()
        _ = try cache.read { $0.accountList() }
        try cache.setCurrentAccountId(alice, clientId: Fixture.client)  // our own write
        #expect(try cache.changeToken() == before)
        let loads = mine.loadCount
        for _ in 0..<5 { _ = try cache.read { $0.accountList() } }
        #expect(mine.loadCount == loads, "unchanged file: the parsed document is reused")

        try other.removeAccount(homeAccountId: alice, environments: [Fixture.env], clientId: Fixture.client)
        #expect(try cache.changeToken() != before)
        #expect(try cache.read { $0.accountList() }.isEmpty)
        #expect(try cache.currentAccountId(clientId: Fixture.client) == nil)
        #expect(mine.loadCount == loads + 1)

        // An in-place rewrite by a foreign writer (same inode) is seen too.
        let changed = try cache.changeToken()
        var bytes = try #require(readBytes(path))
        bytes.append(0x20)
        writeBytes(path, bytes)
        #expect(try cache.changeToken() != changed)
        // The file deleted: an empty cache.
        unlink(path)
        #expect(try cache.read { $0.accountList() }.isEmpty)
    }

    @Test func lockTimesOutWithAClearErrorWhileAnotherProcessHoldsIt() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        // A live process (our own pid) holding the lock file the msal-extensions way.
        writeBytes(path + ".lockfile", Array("\(getpid()) holder".utf8))
        let store = FileTokenCacheStore(path: path, lockTimeout: .milliseconds(300))
        // Writes take the lock (reads do not: see readsTakeNoLockWhileTheFileIsUnchanged).
        let error = #expect(throws: TokenCacheError.self) {
            try TokenCache(store: store).setCurrentAccountId("someone", clientId: "client")
        }
        #expect(error?.code == .lockTimeout && error?.path == path + ".lockfile")
        #expect(error?.reason.contains("held by process \(getpid()) (holder)") == true, "names the holder: \(error?.reason ?? "")")
        // A lock file left by a dead process is removed.
        writeBytes(path + ".lockfile", Array("999999999 crashed".utf8))
        try TokenCache(store: store).setCurrentAccountId("someone", clientId: "client")
        #expect(temp.entries() == ["cache.json"])
    }

    @Test func aLockFileWithNoPidIsRecoveredAtOnce() throws {
        // A crash between creating the lock file and writing its pid leaves it empty; nobody
        // flocks it. It must not stall the next writer for seconds.
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        writeBytes(path + ".lockfile", [])
        let store = FileTokenCacheStore(path: path, lockTimeout: .seconds(3))
        try TokenCache(store: store).setCurrentAccountId("someone", clientId: "client")
        #expect(try TokenCache(store: store).currentAccountId(clientId: "client") == "someone")
        #expect(temp.entries() == ["cache.json"])
    }

    @Test func concurrentThreadsLoseNoUpdate() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        let threads = 8
        let saves = 25
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let cache = TokenCache(store: FileTokenCacheStore(path: path))  // one store each: flock contention
            for index in 0..<saves {
                try? cache.save(Fixture.record(uid: "t\(thread)-\(index)", secret: "s\(thread)-\(index)"))
            }
        }
        let cache = TokenCache(store: FileTokenCacheStore(path: path))
        #expect(try cache.read { $0.accountList() }.count == threads * saves)
        #expect(temp.entries() == ["cache.json"])
    }

    @Test func concurrentProcessesLoseNoUpdate() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        guard runShell("python3 -c 'import fcntl'").status == 0 else {
            if isCI { Issue.record("python3 is required in CI") }
            return
        }
        let path = temp.path + "/cache.json"
        let worker = Fixture.directory + "/lock_worker.py"
        let processes = 4
        let perProcess = 40
        let threads = 4
        let saves = 20
        let group = DispatchGroup()
        let status = LockedBox<Int32>(0)
        DispatchQueue.global().async(group: group) {
            status.set(runShell("python3 '\(worker)' '\(path)' --processes \(processes) \(perProcess)").status)
        }
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            let cache = TokenCache(store: FileTokenCacheStore(path: path))
            for index in 0..<saves {
                try? cache.save(Fixture.record(uid: "swift\(thread)-\(index)", secret: "s"))
            }
        }
        group.wait()
        #expect(status.get() == 0)
        let accounts = try TokenCache(store: FileTokenCacheStore(path: path)).read { $0.accountList() }
        #expect(accounts.count == processes * perProcess + threads * saves)
        #expect(temp.entries() == ["cache.json"])
    }
}

/// A value shared between threads of a test.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private var value: Value
    private let lock = DispatchSemaphore(value: 1)
    init(_ value: Value) { self.value = value }
    func set(_ newValue: Value) {
        lock.wait()
        value = newValue
        lock.signal()
    }
    func get() -> Value {
        lock.wait()
        defer { lock.signal() }
        return value
    }
}

/// Temporary files of writers killed mid-write (full copies of the cache) do not pile up.
@Suite struct OrphanTemporaryTests {
    @Test func theNextWriteRemovesTemporariesOfDeadProcessesOnly() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        let dead = temp.path + "/.cache.json.tmp-999999999-1"
        let live = temp.path + "/.cache.json.tmp-\(getpid())-2"
        let other = temp.path + "/.other.json.tmp-999999999-3"
        for file in [dead, live, other] { writeBytes(file, Array("{}".utf8)) }
        try TokenCache(store: FileTokenCacheStore(path: path)).setCurrentAccountId("someone", clientId: "client")
        #expect(access(dead, F_OK) != 0, "a dead writer's temporary is removed")
        #expect(access(live, F_OK) == 0, "a live writer's temporary is left alone")
        #expect(access(other, F_OK) == 0, "another file's temporaries are not ours")
    }

    @Test func aReadThatLoadsTheFileRemovesThemToo() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        try TokenCache(store: FileTokenCacheStore(path: path)).save(Fixture.record())
        let dead = temp.path + "/.cache.json.tmp-999999999-1"
        let live = temp.path + "/.cache.json.tmp-\(getpid())-2"
        for file in [dead, live] { writeBytes(file, readBytes(path) ?? []) }
        let before = readBytes(path)
        #expect(try TokenCache(store: FileTokenCacheStore(path: path)).read { $0.accountList().count } == 1)
        #expect(access(dead, F_OK) != 0, "a dead writer's temporary is removed by a reader")
        #expect(access(live, F_OK) == 0, "a live writer's temporary is left alone")
        #expect(readBytes(path) == before, "nothing written")
    }
}
