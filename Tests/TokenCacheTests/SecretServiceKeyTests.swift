import Synchronization
import Testing

@testable import TokenCache

/// The Secret Service layer with a fake service: why it is skipped, a new key stored at the
/// first seal only, an existing key used, a later layer's existing key preferred to a new one,
/// and a cache sealed with the service's key never taken for one whose key is gone.
@Suite struct SecretServiceKeyTests {
    let dir = TemporaryDirectory()

    final class FakeService: SecretServiceAccess {
        struct State {
            var items: [String: String] = [:]
            var lookups = 0
            var stores = 0
        }
        let lookupFailure: SecretServiceFailure?
        let collection: Result<Void, SecretServiceFailure>
        let state = Mutex(State())

        init(lookupFailure: SecretServiceFailure? = nil, collection: Result<Void, SecretServiceFailure> = .success(())) {
            self.lookupFailure = lookupFailure
            self.collection = collection
        }

        func lookup(schema: String, attributes: [String: String]) -> Result<String?, SecretServiceFailure> {
            if let lookupFailure { return .failure(lookupFailure) }
            return .success(
                state.withLock { state in
                    state.lookups += 1
                    return state.items[schema + "|" + (attributes["cache"] ?? "")]
                })
        }

        func store(schema: String, attributes: [String: String], label: String, secret: String) -> Result<Void, SecretServiceFailure> {
            state.withLock { state in
                state.stores += 1
                state.items[schema + "|" + (attributes["cache"] ?? "")] = secret
            }
            return .success(())
        }

        func defaultCollectionUnlocked() -> Result<Void, SecretServiceFailure> { collection }
    }

    private func reason(_ source: SecretServiceKeySource) -> (String, String)? {
        guard case .unavailable(let reason, let enable) = source.obtainKey() else { return nil }
        return (reason, enable)
    }

    @Test func eachSkipSaysWhyAndHowToEnableIt() {
        let noBus = SecretServiceKeySource(cachePath: "/c", service: FakeService(), sessionBus: .some(nil))
        #expect(reason(noBus)?.0 == "no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)")
        let cases: [(FakeService, String, String)] = [
            (FakeService(lookupFailure: .libraryMissing("libsecret-1.so.0: cannot open")), "libsecret cannot be loaded", "apt install libsecret-1-0"),
            (
                FakeService(lookupFailure: .serviceError("The name org.freedesktop.secrets was not provided")),
                "the Secret Service cannot be reached: The name org.freedesktop.secrets", "start a Secret Service"
            ),
            (FakeService(lookupFailure: .timedOut(.seconds(3))), "no answer from the Secret Service within 3 s", "unlock the keyring"),
            (
                FakeService(collection: .failure(.locked("the Secret Service's default collection (keyring) is locked"))),
                "default collection (keyring) is locked", "unlock the keyring"
            ),
        ]
        for (service, expectedReason, expectedEnable) in cases {
            let found = reason(SecretServiceKeySource(cachePath: "/c", service: service, sessionBus: "unix:path=/bus", copy: FakeCopy()))
            #expect(found?.0.contains(expectedReason) == true, "\(String(describing: found))")
            #expect(found?.1.contains(expectedEnable) == true, "\(String(describing: found))")
        }
    }

    @Test func aNewKeyIsStoredAtTheFirstSealAndFoundByTheNextProcess() throws {
        let service = FakeService()
        let first = SecretServiceKeySource(cachePath: "/c", service: service, sessionBus: "unix:path=/bus", copy: FakeCopy())
        guard case .encryption(let encryption, let created) = first.obtainKey() else {
            Issue.record("no key")
            return
        }
        #expect(created && service.state.withLock { $0.stores } == 0)  // nothing stored for a cache never written
        let sealed = try encryption.seal(Array("{}".utf8))
        _ = try encryption.seal(Array("{}".utf8))
        #expect(service.state.withLock { $0.stores } == 1)
        #expect(AESGCMCacheEncryption.isSealedBySecretService(sealed))
        let secret = try #require(service.state.withLock { $0.items["org.auth-sidecar.CacheKey|/c"] })
        #expect(secret.utf8.count == 44)  // base64 of 32 bytes
        guard case .encryption(let again, false) = first.obtainKey() else {
            Issue.record("not found")
            return
        }
        #expect(try again.open(sealed) == Array("{}".utf8))
    }

    @Test func aLaterLayersExistingKeyIsPreferredToANewOne() throws {
        let sources: [any CacheKeySource] = [
            KeyStoreTests.FakeSource(layer: .secretService, outcome: .key([UInt8](repeating: 1, count: 32), created: true)),
            KeyStoreTests.FakeSource(layer: .keyring, outcome: .key(KeyStoreTests.key, created: false)),
        ]
        let resolution = try CacheKeyStore.resolve(.auto, sources: sources, cachePath: "/c")
        #expect(resolution.layer == .keyring && !resolution.created)
        #expect(resolution.skipped.map(\.layer) == [.secretService])
        #expect(resolution.skipped.first?.reason == "holds no key for this cache; keyring does")
        let fresh: [any CacheKeySource] = [
            KeyStoreTests.FakeSource(layer: .secretService, outcome: .key(KeyStoreTests.key, created: true)),
            KeyStoreTests.FakeSource(layer: .keyring, outcome: .key([UInt8](repeating: 1, count: 32), created: true)),
        ]
        let made = try CacheKeyStore.resolve(.auto, sources: fresh, cachePath: "/c")
        #expect(made.layer == .secretService && made.created && made.skipped.isEmpty)
    }

    @Test func aCacheSealedWithTheServicesKeyIsNeverSetAsideByAnotherLayer() throws {
        defer { dir.remove() }
        let path = "\(dir.path)/cache.json"
        let service = try #require(AESGCMCacheEncryption(key: KeyStoreTests.key, layer: .secretService))
        try TokenCache(store: FileTokenCacheStore(path: path, encryption: service)).save(Fixture.record())
        let sealed = try #require(readBytes(path))
        let keyring = try #require(AESGCMCacheEncryption(key: [UInt8](repeating: 3, count: 32), layer: .keyring))
        let store = FileTokenCacheStore(path: path, encryption: keyring, setAsideUnopenable: true)
        do {
            _ = try store.read { $0.accountList() }
            Issue.record("opened")
        } catch let error as TokenCacheError {
            #expect(error.description.contains("key kept in the Secret Service"))
        }
        #expect(readBytes(path) == sealed && store.setAsidePath == nil)
        #expect(FileTokenCacheStore(path: path).fileIsEncrypted() == true)
        // The service's own new key (its item deleted) sets it aside, as the keyring's does.
        let newService = try #require(AESGCMCacheEncryption(key: [UInt8](repeating: 4, count: 32), layer: .secretService))
        let aside = FileTokenCacheStore(path: path, encryption: newService, setAsideUnopenable: true)
        #expect(try aside.read { $0.accountList() }.isEmpty && aside.setAsidePath != nil)
    }
}
