import AuthSeams
import AuthTestSupport
import Logging
import Testing
import TokenCache

@testable import AuthCore

#if canImport(Glibc)
    import Glibc
#endif

/// A silent request answered on the thread that asked
/// (``PublicClientApplication/cachedSilentAnswer(_:checkedAfter:mayRead:)``): from what an
/// identical request found, or, for a caller that may wait briefly, from a read of a small
/// cache file (sealed already, if encrypted); anything else is left to the full call.
@Suite final class ReaderAnswerTests {
    let clock = ManualClock()
    let directory: String

    init() throws {
        var template = Array("/tmp/reader-answer-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } }
        directory = try #require(made.map { String(cString: $0) })
    }

    deinit {
        guard let dir = opendir(directory) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { unlink(directory + "/" + name) }
        }
        closedir(dir)
        rmdir(directory)
    }

    var path: String { directory + "/cache.json" }

    /// A process's application on the cache file (a new store: nothing loaded yet).
    func app(encryption: (any CacheEncryption)? = nil, transport: FakeHTTPTransport) throws -> PublicClientApplication {
        let configuration = ClientConfiguration(
            clientId: "client", authority: try Authority("https://login.microsoftonline.com/organizations"))
        return PublicClientApplication(
            configuration: configuration,
            dependencies: AuthDependencies(
                transport: transport, cache: TokenCache(store: FileTokenCacheStore(path: path, encryption: encryption)),
                clock: clock, browser: UnusedBrowser(), listener: UnusedListener(), logger: Logger(label: "test")))
    }

    /// Another process signed in: a token for `User.Read` valid for `expiresIn` seconds.
    func seed(encryption: (any CacheEncryption)? = nil, expiresIn: Int64 = 3600) throws {
        try TokenCache(store: FileTokenCacheStore(path: path, encryption: encryption)).save(
            TokenResponseRecord(
                clientId: "client", environment: "login.microsoftonline.com", realm: "tid-1", homeAccountId: "oid-1.tid-1",
                localAccountId: "oid-1", username: "alice@contoso.com", scopes: ["User.Read"], accessToken: "at-1",
                cachedAt: clock.now(), expiresOn: clock.now() + expiresIn, refreshToken: "rt-1",
                idToken: Tokens.jwt(#"{"oid":"oid-1","tid":"tid-1","preferred_username":"alice@contoso.com"}"#)))
    }

    static let unreachable = FakeHTTPTransport { _ throws(HTTPError) in throw .network("connection refused") }

    var request: SilentRequest {
        var request = SilentRequest()
        request.scopes = ["User.Read"]
        return request
    }

    @Test func aCallerThatMayWaitReadsASmallPlaintextCacheItself() throws {
        try seed()
        let transport = Self.unreachable
        let app = try app(transport: transport)
        #expect(app.cachedSilentAnswer(request) == nil)  // nothing in memory, no read allowed
        let answer = try #require(app.cachedSilentAnswer(request, mayRead: true))
        let result = answer.result("corr-1")
        #expect(result.accessToken == "at-1")
        #expect(result.fromCache)
        #expect(result.correlationId == "corr-1")
        #expect(result.account.username == "alice@contoso.com")
        #expect(transport.requests.isEmpty)
        #expect(app.cachedSilentAnswer(request)?.identity == answer.identity)  // remembered for the next one
    }

    @Test func aTokenDueForRefreshOrNoAccountIsLeftToTheFullCall() throws {
        try seed(expiresIn: 120)  // within the 5-minute margin
        #expect(try app(transport: Self.unreachable).cachedSilentAnswer(request, mayRead: true) == nil)
        var other = request
        other.account = .username("bob@contoso.com")
        #expect(try app(transport: Self.unreachable).cachedSilentAnswer(other, mayRead: true) == nil)
    }

    /// An AES-GCM key in a file of this suite's directory.
    func keyFileEncryption() throws -> AESGCMCacheEncryption {
        let keyFile = directory + "/key"
        let fd = open(keyFile, O_CREAT | O_WRONLY, 0o600)
        try #require(fd >= 0)
        _ = write(fd, String(repeating: "ab", count: 32), 64)
        close(fd)
        return try AESGCMCacheEncryption(keyFile: keyFile)
    }

    @Test func aSealedCacheIsOpenedWithTheKeyAtHand() throws {
        let encryption = try keyFileEncryption()
        try seed(encryption: encryption)
        let transport = Self.unreachable
        let answer = try #require(try app(encryption: encryption, transport: transport).cachedSilentAnswer(request, mayRead: true))
        #expect(answer.result("c").accessToken == "at-1")
        #expect(transport.requests.isEmpty)
    }

    @Test func aPlaintextFileToEncryptIsLeftToTheFullCall() async throws {
        try seed()  // plaintext, then the cache is configured with a key: its first read seals it
        let encryption = try keyFileEncryption()
        let app = try app(encryption: encryption, transport: Self.unreachable)
        #expect(app.cachedSilentAnswer(request, mayRead: true) == nil)  // a write under the lock
        #expect(try await app.acquireTokenSilently(request, correlationId: "c").accessToken == "at-1")
        #expect(FileTokenCacheStore(path: path, encryption: encryption).fileIsEncrypted() == true)
    }

    @Test func aLargeCacheIsNotReadOnTheCallersThread() async throws {
        try seed()
        let fd = open(path, O_WRONLY | O_APPEND)
        try #require(fd >= 0)
        let padding = [UInt8](repeating: UInt8(ascii: " "), count: 300 << 10)  // still the same JSON
        _ = padding.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let app = try app(transport: Self.unreachable)
        #expect(app.cachedSilentAnswer(request, mayRead: true) == nil)
        let result = try await app.acquireTokenSilently(request, correlationId: "c")  // the full call reads it
        #expect(result.accessToken == "at-1")
    }
}
