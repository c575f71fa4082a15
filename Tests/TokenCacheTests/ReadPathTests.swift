import JSON
import Testing

@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// The read path: no lock while the file is unchanged, a safe fallback while another SDK
/// rewrites it in place, indexes by account and username, and documents that stay values.
@Suite struct ReadPathTests {
    let alice = Fixture.home("aaaaaaaa-0000-0000-0000-000000000001")

    @Test func readsTakeNoLockWhileTheFileIsUnchanged() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let store = FileTokenCacheStore(path: temp.path + "/cache.json")
        let cache = TokenCache(store: store)
        try cache.save(Fixture.record())
        let before = (locks: store.lockCount, loads: store.loadCount, checks: store.identityCheckCount)
        for _ in 0..<50 {
            #expect(try cache.read { $0.accounts(homeAccountId: alice).count } == 1)
        }
        #expect(store.lockCount == before.locks, "no lock for reads")
        #expect(store.loadCount == before.loads, "no re-read of an unchanged file")
        #expect(store.identityCheckCount == before.checks + 50, "one stat per read")
    }

    @Test func aFileChangedByAnotherProcessIsReadWithoutTheLockWhenWhole() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        let store = FileTokenCacheStore(path: path)
        #expect(try TokenCache(store: store).read { $0.accountList() }.isEmpty)
        try TokenCache(store: FileTokenCacheStore(path: path)).save(Fixture.record())  // "another process"
        let locks = store.lockCount
        #expect(try TokenCache(store: store).read { $0.accountList() }.map(\.username) == ["alice@contoso.com"])
        #expect(store.lockCount == locks)
    }

    @Test func aFileBeingRewrittenInPlaceIsReadUnderTheLock() throws {
        // msal-extensions rewrites the file in place (truncate, write) under the lock: a reader
        // without the lock may see it empty or cut short, and must then wait for the lock.
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        let writer = TokenCache(store: FileTokenCacheStore(path: path))
        try writer.save(Fixture.record())
        let whole = readBytes(path) ?? []
        let store = FileTokenCacheStore(path: path)
        let cache = TokenCache(store: store)
        #expect(try cache.read { $0.accountList() }.count == 1)
        // Cut short: the optimistic read fails to parse, the locked read reports it, file untouched.
        writeBytes(path, Array(whole.prefix(whole.count / 2)))
        var locks = store.lockCount
        #expect(throws: TokenCacheError.self) { _ = try cache.read { $0.accountList() } }
        #expect(store.lockCount == locks + 1)
        #expect(readBytes(path) == Array(whole.prefix(whole.count / 2)))
        // Truncated to nothing: not taken as "signed out" without the lock.
        writeBytes(path, [])
        locks = store.lockCount
        #expect(try cache.read { $0.accountList() }.isEmpty)
        #expect(store.lockCount == locks + 1)
        // Written back whole: read again.
        writeBytes(path, whole)
        #expect(try cache.read { $0.accountList() }.count == 1)
    }

    @Test func aTransactionThatThrowsLeavesTheKeptDocumentAsTheFileHasIt() throws {
        struct Stop: Error {}
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let store = FileTokenCacheStore(path: temp.path + "/cache.json")
        let cache = TokenCache(store: store)
        try cache.save(Fixture.record())
        #expect(throws: Stop.self) {
            try store.transaction { document -> Int in
                _ = document.removeAccount(
                    homeAccountId: alice, environments: Fixture.aliases,
                    clientId: Fixture.client, familyId: nil)
                throw Stop()
            }
        }
        #expect(try cache.read { $0.accountList() }.count == 1, "the half-done change is gone")
    }

    @Test func lookupsByAccountAndUsernameReadOnlyThatAccount() throws {
        var document = CacheDocument()
        for n in 0..<300 {
            document.save(Fixture.record(uid: "u\(n)", username: "user\(n)@contoso.com", secret: "s\(n)"))
        }
        #expect(document.accounts(username: "USER7@contoso.com").map(\.localAccountId) == ["u7"])
        #expect(document.accounts(homeAccountId: Fixture.home("U42")).map(\.username) == ["user42@contoso.com"])
        #expect(document.homeAccountIds(environments: [Fixture.env], limit: 2).count == 2)
        #expect(document.homeAccountIds(environments: ["elsewhere.example"], limit: 2).isEmpty)
        // The username index follows removals.
        _ = document.removeAccount(
            homeAccountId: Fixture.home("u7"), environments: Fixture.aliases,
            clientId: Fixture.client, familyId: nil)
        #expect(document.accounts(username: "user7@contoso.com").isEmpty)
    }

    @Test func aCopyOfADocumentIsNotChangedByTheOriginal() throws {
        var original = CacheDocument()
        original.save(Fixture.record())
        let copy = original
        _ = original.removeAccount(homeAccountId: alice, environments: Fixture.aliases, clientId: Fixture.client, familyId: nil)
        #expect(copy.accounts(homeAccountId: alice).count == 1)
        #expect(original.accounts(homeAccountId: alice).isEmpty)
        #expect(try CacheDocument(parsing: copy.serialized()).accounts(homeAccountId: alice).count == 1)
    }

    @Test func discoveryRecordsAreKeptInTheSidecarSection() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        try TokenCache(store: FileTokenCacheStore(path: path)).saveDiscoveryRecord(["fetched_at": 1], forKey: "metadata x")
        let reread = TokenCache(store: FileTokenCacheStore(path: path))
        #expect(try reread.discoveryRecord("metadata x") == ["fetched_at": 1])
        let top = try JSONValue.parse(readBytes(path) ?? [])
        #expect(top["AuthSidecar"]?["discovery"]?["metadata x"] != nil)
    }
}

/// Large caches (over a megabyte) read back whole; a cut one is refused and kept.
@Suite struct LargeCacheTests {
    @Test func aLargeCacheReadsBackWholeAndACutOneIsRefusedAndKept() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        let writer = TokenCache(store: FileTokenCacheStore(path: path))
        try writer.store.transaction { document in
            for n in 0..<1500 {
                document.save(Fixture.record(uid: "u\(n)", username: "user\(n)@contoso.com", secret: String(repeating: "s", count: 400)))
            }
        }
        let whole = readBytes(path) ?? []
        #expect(whole.count > 1_000_000)
        let reader = TokenCache(store: FileTokenCacheStore(path: path))
        #expect(try reader.read { $0.accounts(username: "user1234@contoso.com").count } == 1)
        #expect(try reader.read { $0.accountList() }.count == 1500)
        let cut = Array(whole.prefix(whole.count - 10))
        writeBytes(path, cut)
        let error = #expect(throws: TokenCacheError.self) { _ = try TokenCache(store: FileTokenCacheStore(path: path)).read { $0.accountList() } }
        #expect(error?.code == .unreadable)
        #expect(readBytes(path) == cut, "left untouched")
    }

    @Test func aLargeEncryptedCacheIsOpenedWithItsKey() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        let keyFile = temp.path + "/key"
        writeBytes(keyFile, Array(repeating: 7, count: 32))
        chmod(keyFile, 0o600)
        let key = try AESGCMCacheEncryption(keyFile: keyFile)
        try TokenCache(store: FileTokenCacheStore(path: path, encryption: key)).store.transaction { document in
            for n in 0..<1500 {
                document.save(Fixture.record(uid: "u\(n)", username: "user\(n)@contoso.com", secret: String(repeating: "s", count: 400)))
            }
        }
        #expect(AESGCMCacheEncryption.isSealed(readBytes(path) ?? []))
        #expect(try TokenCache(store: FileTokenCacheStore(path: path, encryption: key)).read { $0.accountList() }.count == 1500)
    }
}
