import FoundationEssentials
import Synchronization
import Testing

@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// A kernel keyring copy a test can look into.
final class FakeCopy: SecretServiceKeyCopy {
    struct State {
        var key: [UInt8]?
        var seconds: Int?
        var finds = 0
        var drops = 0
    }
    let state: Mutex<State>

    init(holding key: [UInt8]? = nil) { state = Mutex(State(key: key)) }

    func find() -> [UInt8]? {
        state.withLock {
            $0.finds += 1
            return $0.key
        }
    }

    func keep(_ key: [UInt8], seconds: Int) {
        state.withLock {
            $0.key = key
            $0.seconds = seconds
        }
    }

    func drop() {
        state.withLock {
            $0.key = nil
            $0.drops += 1
        }
    }
}

/// The Secret Service layer's fast path: the kernel keyring's copy of the key is taken before
/// libsecret, kept with a timeout when the service gives a key, dropped (and the service asked)
/// when it does not open the file, replaced when a new key is stored, and off with 0.
@Suite struct SecretServiceKeyCopyTests {
    typealias FakeService = SecretServiceKeyTests.FakeService
    static let key = KeyStoreTests.key
    static let wrong = [UInt8](repeating: 7, count: 32)

    private func service(holding key: [UInt8]?) -> FakeService {
        let service = FakeService()
        if let key { service.state.withLock { $0.items["org.auth-sidecar.CacheKey|/c"] = Data(key).base64EncodedString() } }
        return service
    }

    private func source(_ service: FakeService, _ copy: FakeCopy, seconds: Int = 600) -> SecretServiceKeySource {
        SecretServiceKeySource(cachePath: "/c", service: service, sessionBus: "unix:path=/bus", keyCopySeconds: seconds, copy: copy)
    }

    private func sealed(with key: [UInt8]) throws -> [UInt8] {
        try #require(AESGCMCacheEncryption(key: key, layer: .secretService)).seal(Array("{}".utf8))
    }

    @Test func theCopyIsTakenBeforeLibsecret() throws {
        let service = service(holding: Self.wrong)  // the service is never asked
        let copy = FakeCopy(holding: Self.key)
        guard case .encryption(let encryption, false) = source(service, copy).obtainKey() else {
            Issue.record("the copy was not taken")
            return
        }
        #expect(try encryption.open(sealed(with: Self.key)) == Array("{}".utf8))
        #expect(service.state.withLock { $0.lookups } == 0)
        #expect(encryption.keyCopySeconds == 600)
    }

    @Test func theServicesKeyIsKeptWithATimeout() throws {
        let service = service(holding: Self.key)
        let copy = FakeCopy()
        guard case .encryption(let encryption, false) = source(service, copy, seconds: 120).obtainKey() else {
            Issue.record("no key")
            return
        }
        #expect(service.state.withLock { $0.lookups } == 1 && encryption.keyCopySeconds == nil)
        #expect(copy.state.withLock { ($0.key, $0.seconds) } == (Self.key, 120))
    }

    /// Issue #42: a copy gone from the keyring while this process holds the service's key is
    /// put back before a write, with the time it has left, at most every tenth of that time.
    @Test func aMissingCopyIsPutBackBeforeAWriteForTheTimeItHasLeft() throws {
        let service = service(holding: Self.key)
        let copy = FakeCopy()
        guard case .encryption(let encryption, false) = source(service, copy, seconds: 5).obtainKey() else {
            Issue.record("no key")
            return
        }
        copy.drop()
        _ = try encryption.seal(Array("{}".utf8))  // not due yet: the copy was kept just now
        #expect(copy.state.withLock { $0.key } == nil)
        usleep(1_100_000)
        _ = try encryption.seal(Array("{}".utf8))
        let (kept, seconds) = copy.state.withLock { ($0.key, $0.seconds) }
        #expect(kept == Self.key && (seconds ?? 0) >= 3 && (seconds ?? 0) <= 4)
        #expect(service.state.withLock { $0.lookups } == 1)  // the service was not asked again
    }

    /// Issue #35: a stored-key layer's errors name the cache file, not "(key from ...)".
    @Test func aKeyThatDoesNotOpenTheFileNamesTheCacheFile() throws {
        guard case .encryption(let encryption, false) = source(service(holding: Self.key), FakeCopy()).obtainKey() else {
            Issue.record("no key")
            return
        }
        #expect {
            try encryption.open(sealed(with: Self.wrong))
        } throws: { error in
            (error as? TokenCacheError)?.path == "/c"
        }
    }

    @Test func aCopyThatDoesNotOpenTheFileIsReplacedByTheServicesKey() throws {
        let service = service(holding: Self.key)
        let copy = FakeCopy(holding: Self.wrong)
        guard case .encryption(let encryption, false) = source(service, copy).obtainKey() else {
            Issue.record("no key")
            return
        }
        #expect(try encryption.open(sealed(with: Self.key)) == Array("{}".utf8))
        #expect(service.state.withLock { $0.lookups } == 1)
        #expect(copy.state.withLock { ($0.key, $0.seconds) } == (Self.key, 600))
        #expect(encryption.keyCopySeconds == nil)  // the key is the service's now
    }

    @Test func aCopyTheServiceDoesNotConfirmIsDropped() throws {
        let copy = FakeCopy(holding: Self.wrong)
        guard case .encryption(let encryption, false) = source(service(holding: nil), copy).obtainKey() else {
            Issue.record("no key")
            return
        }
        #expect(throws: TokenCacheError.self) { try encryption.open(try sealed(with: Self.key)) }
        #expect(copy.state.withLock { $0.key } == nil)
    }

    @Test func aNewKeyStoredReplacesTheCopy() throws {
        let service = service(holding: nil)
        let copy = FakeCopy()
        guard case .encryption(let encryption, true) = source(service, copy).obtainKey() else {
            Issue.record("no new key")
            return
        }
        #expect(copy.state.withLock { $0.key } == nil)  // nothing kept before the key is stored
        let sealed = try encryption.seal(Array("{}".utf8))
        let stored = try #require(service.state.withLock { $0.items["org.auth-sidecar.CacheKey|/c"] })
        let kept = try #require(copy.state.withLock { $0.key })
        #expect(Data(kept).base64EncodedString() == stored)
        #expect(try AESGCMCacheEncryption(key: kept, layer: .secretService)?.open(sealed) == Array("{}".utf8))
    }

    @Test func zeroSecondsKeepsNoCopyAndDropsAnyLeft() throws {
        let service = service(holding: Self.key)
        let copy = FakeCopy(holding: Self.wrong)
        guard case .encryption(let encryption, false) = source(service, copy, seconds: 0).obtainKey() else {
            Issue.record("no key")
            return
        }
        #expect(try encryption.open(sealed(with: Self.key)) == Array("{}".utf8))
        #expect(service.state.withLock { $0.lookups } == 1)
        #expect(copy.state.withLock { ($0.key, $0.finds, $0.drops) } == (nil, 0, 1))
    }
}
