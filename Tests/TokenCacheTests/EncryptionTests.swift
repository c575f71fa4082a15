import Testing

@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// The file store with AES-256-GCM at rest: real files, real keys.
@Suite struct EncryptionTests {
    let dir = TemporaryDirectory()

    private func keyFile(_ name: String, contents: [UInt8], mode: mode_t = 0o600) -> String {
        let path = "\(dir.path)/\(name)"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        _ = contents.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        fchmod(fd, mode)
        close(fd)
        return path
    }

    private func fileBytes(_ path: String) -> [UInt8] {
        (try? POSIXFile.readFile(path))??.bytes ?? []
    }

    @Test func writesNoTokenInClearAndReadsItBackWithTheKey() throws {
        defer { dir.remove() }
        let key = try AESGCMCacheEncryption(keyFile: keyFile("key", contents: Array(repeating: 7, count: 32)))
        let path = "\(dir.path)/cache.json"
        try TokenCache(store: FileTokenCacheStore(path: path, encryption: key)).save(Fixture.record())
        let stored = String(decoding: fileBytes(path), as: UTF8.self)
        #expect(stored.hasPrefix("auth-sidecar-aes256gcm-v1\n"))
        for secret in ["at-alice", "rt-alice", "idt-alice", "alice@contoso.com"] { #expect(!stored.contains(secret)) }
        let again = TokenCache(store: FileTokenCacheStore(path: path, encryption: key))  // another process
        #expect(try again.read { $0.accountList() }.map(\.username) == ["alice@contoso.com"])
    }

    @Test func refusesTheWrongKeyAndLeavesTheFileAlone() throws {
        defer { dir.remove() }
        let path = "\(dir.path)/cache.json"
        let right = try AESGCMCacheEncryption(
            keyFile: keyFile("right", contents: Array("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n".utf8)))
        try TokenCache(store: FileTokenCacheStore(path: path, encryption: right)).save(Fixture.record())
        let before = fileBytes(path)
        let wrong = try AESGCMCacheEncryption(keyFile: keyFile("wrong", contents: Array(repeating: 1, count: 32)))
        #expect(throws: TokenCacheError.self) { try TokenCache(store: FileTokenCacheStore(path: path, encryption: wrong)).read { $0.accountList() } }
        #expect(throws: TokenCacheError.self) { try TokenCache(store: FileTokenCacheStore(path: path)).read { $0.accountList() } }
        #expect(fileBytes(path) == before)
    }

    @Test func encryptsAPlainCacheAtTheNextWrite() throws {
        defer { dir.remove() }
        let path = "\(dir.path)/cache.json"
        try TokenCache(store: FileTokenCacheStore(path: path)).save(Fixture.record())
        #expect(fileBytes(path).first == UInt8(ascii: "{"))
        let key = try AESGCMCacheEncryption(keyFile: keyFile("key", contents: Array("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=".utf8)))
        let cache = TokenCache(store: FileTokenCacheStore(path: path, encryption: key))
        #expect(try cache.read { $0.accountList() }.count == 1)  // read as it was
        try cache.save(Fixture.record(uid: "bbbbbbbb-0000-0000-0000-000000000002", username: "bob@contoso.com", secret: "bob"))
        #expect(AESGCMCacheEncryption.isSealed(fileBytes(path)))
        #expect(try cache.read { $0.accountList() }.count == 2)
    }

    @Test func refusesAKeyFileOthersCanReadOrOfTheWrongSize() throws {
        defer { dir.remove() }
        #expect(throws: TokenCacheError.self) {
            try AESGCMCacheEncryption(keyFile: keyFile("open", contents: Array(repeating: 7, count: 32), mode: 0o644))
        }
        #expect(throws: TokenCacheError.self) { try AESGCMCacheEncryption(keyFile: keyFile("short", contents: Array("abc".utf8))) }
        #expect(throws: TokenCacheError.self) { try AESGCMCacheEncryption(keyFile: "\(dir.path)/missing") }
    }
}
