import Testing

@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// The key store's rules: layers in order, plaintext only when chosen, one message naming
/// every layer; the file store's migration and set-aside on real files.
@Suite struct KeyStoreTests {
    let dir = TemporaryDirectory()

    struct FakeSource: CacheKeySource {
        let layer: CacheKeyLayer
        let outcome: CacheKeyOutcome
        func obtainKey() -> CacheKeyOutcome { outcome }
    }

    static let key = [UInt8](repeating: 9, count: 32)

    @Test func theFirstLayerWithAKeyWinsAndTheOnesBeforeItSaySo() throws {
        let sources: [any CacheKeySource] = [
            FakeSource(layer: .secretService, outcome: .unavailable(reason: "no D-Bus", enable: "start one")),
            FakeSource(layer: .keyring, outcome: .key(Self.key, created: true)),
            FakeSource(layer: .keyFile, outcome: .key([1], created: false)),
        ]
        let resolution = try CacheKeyStore.resolve(.auto, sources: sources, cachePath: "/c")
        #expect(resolution.layer == .keyring && resolution.created && resolution.encryption != nil)
        #expect(resolution.skipped == [.init(layer: .secretService, reason: "no D-Bus", enable: "start one")])
    }

    @Test func nothingAvailableNamesEveryLayerAndThePlaintextLine() {
        let sources = CacheKeyStore.sources(for: .auto, cachePath: "/c", keyFile: nil, keyCommand: nil)
            .filter { $0.layer != .keyring }  // the kernel's answer is the e2e tests' business
            .map { $0.layer == .secretService ? SecretServiceKeySource(cachePath: "/c", sessionBus: .some(nil)) : $0 }
        #expect(sources.map(\.layer) == [.secretService, .keyFile, .keyCommand])
        do {
            _ = try CacheKeyStore.resolve(.auto, sources: sources, cachePath: "/c")
            Issue.record("resolved with no layer")
        } catch {
            #expect(error.skipped.map(\.layer) == [.secretService, .keyFile, .keyCommand, .plaintext])
            #expect(error.message.contains("secretService: no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)"))
            #expect(error.message.contains("keyFile: not configured; to use it: \"cache\": {\"encryption\": {\"keyFile\""))
            #expect(error.message.contains("plaintext: not chosen; to use it: \"cacheProtection\": \"plaintext\""))
        }
    }

    @Test func aConfiguredKeyFileOrCommandIsTheOnlyLayerUnderAuto() {
        #expect(CacheKeyStore.sources(for: .auto, cachePath: "/c", keyFile: "/k", keyCommand: nil).map(\.layer) == [.keyFile])
        #expect(CacheKeyStore.sources(for: .auto, cachePath: "/c", keyFile: nil, keyCommand: ["p"]).map(\.layer) == [.keyCommand])
        #expect(CacheKeyStore.sources(for: .only(.keyring), cachePath: "/c", keyFile: "/k", keyCommand: nil).map(\.layer) == [.keyring])
    }

    @Test func plaintextOnlyWhenChosen() throws {
        let resolution = try CacheKeyStore.resolve(.only(.plaintext), sources: [], cachePath: "/c")
        #expect(resolution.layer == .plaintext && resolution.encryption == nil)
        #expect(CacheProtection(name: "plaintext") == .only(.plaintext) && CacheProtection(name: "auto") == .auto)
        #expect(CacheProtection(name: "none") == nil)
    }

    @Test func aPlaintextCacheIsSealedInPlaceAtTheFirstRead() throws {
        defer { dir.remove() }
        let path = "\(dir.path)/cache.json"
        try TokenCache(store: FileTokenCacheStore(path: path)).save(Fixture.record())
        let plain = try #require(readBytes(path))
        let key = try #require(AESGCMCacheEncryption(key: Self.key, layer: .keyring))
        let store = FileTokenCacheStore(path: path, encryption: key)
        #expect(try store.read { $0.accountList() }.count == 1)
        #expect(store.migratedPlaintext && store.fileIsEncrypted() == true)
        #expect(try key.open(try #require(readBytes(path))) == plain)
        #expect(dir.entries().filter { !$0.hasSuffix(".lockfile") } == ["cache.json"])  // no plaintext copy left
    }

    @Test func anUnopenableCacheIsSetAsideOnlyWhenAskedTo() throws {
        defer { dir.remove() }
        let path = "\(dir.path)/cache.json"
        let old = try #require(AESGCMCacheEncryption(key: Self.key, layer: .keyring))
        try TokenCache(store: FileTokenCacheStore(path: path, encryption: old)).save(Fixture.record())
        let sealed = try #require(readBytes(path))
        let new = try #require(AESGCMCacheEncryption(key: [UInt8](repeating: 3, count: 32), layer: .keyring))
        #expect(throws: TokenCacheError.self) { try FileTokenCacheStore(path: path, encryption: new).read { $0.accountList() } }
        #expect(readBytes(path) == sealed)
        let store = FileTokenCacheStore(path: path, encryption: new, setAsideUnopenable: true)
        #expect(try store.read { $0.accountList() }.isEmpty)
        let aside = try #require(store.setAsidePath)
        #expect(readBytes(aside) == sealed && readBytes(path) == nil)
        #expect(FileTokenCacheStore(path: path).setAsidePath == aside)  // a later process still sees it
    }

    /// Issue #35: a layer that cannot tell stops every other layer's new key from taking the
    /// file over; its message names the file, the layer, why and what to do.
    @Test func aLayerThatCannotTellFailsNamingTheFileAndWhatToDo() {
        let sources: [any CacheKeySource] = [
            FakeSource(layer: .secretService, outcome: .key(Self.key, created: true)),
            FakeSource(layer: .keyring, outcome: .outOfReach(reason: "EACCES", enable: "keyctl link @u @s")),
        ]
        #expect {
            try CacheKeyStore.resolve(.auto, sources: sources, cachePath: "/c")
        } throws: { error in
            (error as? CacheProtectionError)?.message
                == "the token cache /c is left as it is: its key is in the keyring layer, out of reach of this process (EACCES); "
                + "to use it: keyctl link @u @s"
        }
        // A later layer holding the key still wins.
        let held: [any CacheKeySource] = [sources[1], FakeSource(layer: .keyFile, outcome: .key(Self.key, created: false))]
        #expect((try? CacheKeyStore.resolve(.auto, sources: held, cachePath: "/c"))?.layer == .keyFile)
    }

    @Test func onlyAFileSealedByALayerThatProvablyLostItsKeyIsSetAside() throws {
        defer { dir.remove() }
        let path = "\(dir.path)/cache.json"
        let service = try #require(AESGCMCacheEncryption(key: Self.key, layer: .secretService))
        try TokenCache(store: FileTokenCacheStore(path: path, encryption: service)).save(Fixture.record())
        let sealed = try #require(readBytes(path))
        #expect(SealRecord.read(path)?.layer == .secretService)
        let new = try #require(AESGCMCacheEncryption(key: [UInt8](repeating: 3, count: 32), layer: .secretService))
        let keyringOnly = FileTokenCacheStore(path: path, encryption: new, setAsideUnopenable: true, keylessLayers: [.keyring])
        #expect(throws: TokenCacheError.self) { try keyringOnly.read { $0.accountList() } }
        #expect(readBytes(path) == sealed)
        let both = FileTokenCacheStore(path: path, encryption: new, setAsideUnopenable: true, keylessLayers: [.keyring, .secretService])
        #expect(try both.read { $0.accountList() }.isEmpty && both.setAsidePath != nil)
    }

    @Test func theHeaderRecordsTheKeyringThatSealedIt() throws {
        let keyring = try #require(AESGCMCacheEncryption(key: Self.key, layer: .keyring, cachePath: "/c"))
        let sealed = try keyring.seal(Array("{}".utf8))
        let record = try #require(SealRecord.parse(sealed)?.record)
        #expect(record.layer == .keyring && record.place == KeyringPlace.current && !KeyringPlace.current.bootID.isEmpty)
        #expect(try keyring.open(sealed) == Array("{}".utf8))
        // The record is authenticated: another namespace written into it does not open.
        let place = KeyringPlace.current
        let forged = SealRecord(layer: .keyring, place: KeyringPlace(bootID: place.bootID, userNamespace: "1")).line
        let edited = forged + sealed.drop { $0 != UInt8(ascii: "\n") }.dropFirst()
        #expect(throws: TokenCacheError.self) { try keyring.open(Array(edited)) }
        #expect(SealRecord.parse(Array("auth-sidecar-aes256gcm-v1\nxyz".utf8))?.record == SealRecord(layer: nil))
        #expect(SealRecord.parse(Array("auth-sidecar-aes256gcm-v1 other\nxyz".utf8)) == nil)
    }

    @Test(arguments: [
        // (sealed boot, sealed namespace, this boot, this namespace, provably gone)
        ("b1", KeyringPlace.initialNamespace, "b1", KeyringPlace.initialNamespace, true),  // expired or removed here
        ("b1", KeyringPlace.initialNamespace, "b1", "9", false),  // a container, the host's file
        ("b1", "9", "b1", KeyringPlace.initialNamespace, false),  // the host, a container's file
        ("b0", "9", "b1", KeyringPlace.initialNamespace, true),  // after a reboot: every keyring died
        ("b0", KeyringPlace.initialNamespace, "b1", "9", false),  // never a container taking the host's file over
    ])
    func whenAMissingKeyringKeyIsProvablyGone(sealedBoot: String, sealedNS: String, boot: String, ns: String, gone: Bool) {
        let here = KeyringPlace(bootID: boot, userNamespace: ns)
        #expect(here.provesGone(sealedAt: KeyringPlace(bootID: sealedBoot, userNamespace: sealedNS)) == gone)
    }
}
