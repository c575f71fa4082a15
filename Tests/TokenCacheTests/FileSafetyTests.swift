import Testing

@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// Cache path safety with real files: no symbolic link is followed (cache, lock file, key
/// file), a file or directory others can write is refused with the fix, and no error quotes
/// what a file contains.
@Suite struct FileSafetyTests {
    /// Another user's cache (here: a file outside the cache directory) holding one account.
    private func plantedTarget(in temp: TemporaryDirectory) throws -> String {
        let target = temp.path + "/elsewhere/theirs.json"
        try TokenCache(store: FileTokenCacheStore(path: target)).save(Fixture.record(username: "mallory@evil.example"))
        return target
    }

    @Test func aSymlinkAtTheCachePathIsNotFollowedForReadsOrWrites() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let target = try plantedTarget(in: temp)
        let before = readBytes(target)
        let path = temp.path + "/cache.json"
        #expect(symlink(target, path) == 0)
        let cache = TokenCache(store: FileTokenCacheStore(path: path))
        for attempt in 0..<2 {
            let error = #expect(throws: TokenCacheError.self) {
                if attempt == 0 { _ = try cache.read { $0.accountList() } } else { try cache.save(Fixture.record()) }
            }
            #expect(error?.code == .unreadable && error?.path == path)
            #expect(error?.reason.contains("symbolic link") == true, "\(String(describing: error))")
            #expect(error?.reason.contains("rm \(path)") == true)
        }
        #expect(readBytes(target) == before, "the link's target is neither read nor written")
        var info = stat()
        #expect(lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK, "the link is left for the user")
    }

    @Test func aCacheFileOthersCanWriteIsRefusedWithTheFix() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        try TokenCache(store: FileTokenCacheStore(path: path)).save(Fixture.record())
        chmod(path, 0o666)
        let error = #expect(throws: TokenCacheError.self) { _ = try TokenCache(store: FileTokenCacheStore(path: path)).read { $0.accountList() } }
        #expect(error?.code == .unreadable && error?.path == path)
        #expect(error?.reason.contains("chmod 600 \(path)") == true, "\(String(describing: error))")
        chmod(path, 0o644)  // readable by others (as older msal-extensions wrote it): made private
        #expect(try TokenCache(store: FileTokenCacheStore(path: path)).read { $0.accountList() }.count == 1)
        #expect(mode(of: path) == 0o600)
    }

    @Test func aCacheDirectoryThatIsASymlinkIsRefused() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let real = temp.path + "/real"
        try TokenCache(store: FileTokenCacheStore(path: real + "/cache.json")).save(Fixture.record())
        let before = readBytes(real + "/cache.json")
        let link = temp.path + "/link"
        #expect(symlink(real, link) == 0)
        let cache = TokenCache(store: FileTokenCacheStore(path: link + "/cache.json"))
        for attempt in 0..<2 {
            let error = #expect(throws: TokenCacheError.self) {
                if attempt == 0 { _ = try cache.read { $0.accountList() } } else { try cache.save(Fixture.record(secret: "new")) }
            }
            #expect(error?.code == .unreadable && error?.path == link)
            #expect(error?.reason.contains("symbolic link") == true, "\(String(describing: error))")
        }
        #expect(readBytes(real + "/cache.json") == before)
        #expect(temp.entries(of: real) == ["cache.json"], "no lock file made through the link")
    }

    @Test func aDirectoryOthersCanWriteIsRefusedWithTheFix() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let directory = temp.path + "/shared"
        let path = directory + "/cache.json"
        try TokenCache(store: FileTokenCacheStore(path: path)).save(Fixture.record())
        let before = readBytes(path)
        for loose: mode_t in [0o770, 0o703] {
            chmod(directory, loose)
            let cache = TokenCache(store: FileTokenCacheStore(path: path))
            for attempt in 0..<2 {
                let error = #expect(throws: TokenCacheError.self) {
                    if attempt == 0 { _ = try cache.read { $0.accountList() } } else { try cache.save(Fixture.record(secret: "new")) }
                }
                #expect(error?.path == directory)
                #expect(error?.reason.contains("chmod 700 \(directory)") == true, "\(String(describing: error))")
            }
        }
        #expect(readBytes(path) == before, "nothing written")
        chmod(directory, 0o755)
        #expect(try TokenCache(store: FileTokenCacheStore(path: path)).read { $0.accountList() }.count == 1)
    }

    @Test func aParseErrorNeverQuotesTheFile() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        for garbage in ["SECRET-ONE is not json", #"{"AccessToken": SECRET-TWO}"#, "[\"SECRET-THREE\"", "\"\\uSECR\""] {
            writeBytes(path, Array(garbage.utf8))
            let error = #expect(throws: TokenCacheError.self) { _ = try TokenCache(store: FileTokenCacheStore(path: path)).read { $0.accountList() } }
            let text = String(describing: error)
            #expect(text.contains("not JSON") || text.contains("top level"), "\(text)")
            #expect(!text.contains("SECR"), "\(text)")
        }
    }

    @Test func aSymlinkAtTheLockFileIsRefusedAtOnce() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let target = try plantedTarget(in: temp)
        let before = readBytes(target)
        let path = temp.path + "/cache.json"
        #expect(symlink(target, path + ".lockfile") == 0)
        let clock = ContinuousClock()
        let started = clock.now
        let error = #expect(throws: TokenCacheError.self) {
            try TokenCache(store: FileTokenCacheStore(path: path, lockTimeout: .seconds(5))).save(Fixture.record())
        }
        #expect(clock.now - started < .seconds(2), "refused, not waited on")
        #expect(error?.path == path + ".lockfile" && error?.reason.contains("symbolic link") == true)
        #expect(readBytes(target) == before)
        var info = stat()
        #expect(lstat(path, &info) != 0, "no cache written")
    }

    @Test func aSymlinkAtTheKeyFileIsRefused() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let real = temp.path + "/real.key"
        writeBytes(real, Array(repeating: 7, count: 32))
        chmod(real, 0o600)
        #expect(throws: Never.self) { try AESGCMCacheEncryption(keyFile: real) }
        let link = temp.path + "/link.key"
        #expect(symlink(real, link) == 0)
        let error = #expect(throws: TokenCacheError.self) { try AESGCMCacheEncryption(keyFile: link) }
        #expect(error?.path == link && error?.reason.contains("symbolic link") == true)
    }

    @Test func theRefreshLockIsNotTakenThroughASymlink() async throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let target = temp.path + "/target"
        writeBytes(target, [])
        let path = temp.path + "/cache.json.refresh.lock"
        #expect(symlink(target, path) == 0)
        let lock = FileRefreshLock(path: path)
        // Through the link, two holders of one key would exclude each other (the second waits
        // out its 5 s); without it, the second runs at once (no lock to be had: each alone).
        let clock = ContinuousClock()
        let started = clock.now
        let ran = try await lock.withLock(key: "k", timeout: .seconds(5)) {
            try await lock.withLock(key: "k", timeout: .seconds(5)) { true }
        }
        #expect(ran)
        #expect(clock.now - started < .seconds(2))
    }
}
