import JSON
import Testing

@testable import TokenCache

/// A document loaded by the scanner (entries parsed when read, the tree built when changed)
/// answers, changes and serializes exactly as one parsed whole by jansson.
@Suite struct LazyLoadTests {
    let alice = Fixture.home("aaaaaaaa-0000-0000-0000-000000000001")

    /// A cache with several accounts, unknown sections and fields, an entry that is not an
    /// object, escapes and sidecar state.
    func sample() -> [UInt8] {
        var document = CacheDocument()
        for n in 0..<20 {
            document.save(Fixture.record(uid: "u\(n)", username: "User\(n)@Contoso.com", secret: "s\(n)", familyId: n % 2 == 0 ? "1" : nil))
        }
        document.save(Fixture.record())
        document.setCurrentAccountId(alice, clientId: Fixture.client)
        var text = String(decoding: document.serialized(), as: UTF8.self)
        text.removeLast()
        text += #","OtherSdk":{"anything":[true,null,1.5,"\u00e9\n"]},"Zz":7}"#
        text = text.replacing(
            #""Account":{"#,
            with:
                #""Account":{"weird":[1],"esc":{"home_account_id":"X\u0041Y","username":"a\"b@c","environment":"e","realm":"r","local_account_id":"l","authority_type":"MSSTS"},"#
        )
        return Array(text.utf8)
    }

    @Test func aScannedDocumentReadsAsAParsedOne() throws {
        let bytes = sample()
        let scanned = try CacheDocument(parsing: bytes, scanning: true)
        let parsed = try CacheDocument(parsing: bytes, scanning: false)
        #expect(scanned.accountList() == parsed.accountList())
        #expect(scanned.accountList().count == 22)
        #expect(scanned.accounts(homeAccountId: "xay") == parsed.accounts(homeAccountId: "XAY"))
        #expect(scanned.accounts(homeAccountId: "xay").count == 1)
        #expect(scanned.accounts(username: "A\"B@C").count == 1)
        #expect(scanned.accounts(username: "user7@contoso.com") == parsed.accounts(username: "USER7@contoso.com"))
        #expect(scanned.accounts(username: "user7@contoso.com").count == 1)
        for home in [alice, Fixture.home("u3"), Fixture.home("u4")] {
            let query = (home: home, scopes: ScopeSet(["User.Read"]))
            let token = scanned.accessToken(
                homeAccountId: query.home, environments: Fixture.aliases, realm: Fixture.tenant,
                clientId: Fixture.client, scopes: query.scopes, keyId: nil)
            #expect(token != nil)
            #expect(
                token
                    == parsed.accessToken(
                        homeAccountId: query.home, environments: Fixture.aliases, realm: Fixture.tenant,
                        clientId: Fixture.client, scopes: query.scopes, keyId: nil))
            #expect(
                scanned.refreshTokensToTry(homeAccountId: home, environments: Fixture.aliases, clientId: Fixture.client)
                    == parsed.refreshTokensToTry(homeAccountId: home, environments: Fixture.aliases, clientId: Fixture.client))
            #expect(
                scanned.idToken(homeAccountId: home, environments: Fixture.aliases, realm: nil, clientId: Fixture.client)
                    == parsed.idToken(homeAccountId: home, environments: Fixture.aliases, realm: nil, clientId: Fixture.client))
        }
        #expect(
            scanned.homeAccountIds(environments: Fixture.aliases, limit: 100).sorted()
                == parsed.homeAccountIds(environments: Fixture.aliases, limit: 100).sorted())
        #expect(scanned.appMetadata(environments: Fixture.aliases, clientId: Fixture.client) != nil)
        #expect(scanned.currentAccountId(clientId: Fixture.client) == alice)
        #expect(scanned.serialized() == parsed.serialized())
    }

    @Test func aScannedDocumentChangesAsAParsedOneAndKeepsWhatItDoesNotTouch() throws {
        let bytes = sample()
        var scanned = try CacheDocument(parsing: bytes, scanning: true)
        var parsed = try CacheDocument(parsing: bytes, scanning: false)
        let copy = scanned
        scanned.save(Fixture.record(uid: "new", username: "new@contoso.com", secret: "n"))
        parsed.save(Fixture.record(uid: "new", username: "new@contoso.com", secret: "n"))
        _ = scanned.removeAccount(homeAccountId: Fixture.home("u5"), environments: Fixture.aliases, clientId: Fixture.client, familyId: nil)
        _ = parsed.removeAccount(homeAccountId: Fixture.home("u5"), environments: Fixture.aliases, clientId: Fixture.client, familyId: nil)
        #expect(scanned.serialized() == parsed.serialized())
        let after = try #require(try JSONValue.parse(scanned.serialized()).objectValue)
        #expect(after["OtherSdk"] == ["anything": [true, nil, 1.5, "é\n"]])
        #expect(after["Account"]?["weird"] == [1])
        #expect(copy.accounts(homeAccountId: Fixture.home("u5")).count == 1, "a copy keeps the document as loaded")
        #expect(copy.serialized() == (try CacheDocument(parsing: bytes, scanning: false)).serialized())
    }

    @Test func documentsTheScannerRefusesGiveJanssonsVerdict() throws {
        // Valid, but with an escaped key: parsed by jansson at once.
        let escaped = try CacheDocument(parsing: Array(#"{"Other":{"\u0061":1},"Account":{}}"#.utf8))
        #expect(try JSONValue.parse(escaped.serialized())["Other"] == ["a": 1])
        for bad in [#"{"Account":{"k":{"a":1,"a":2}}}"#, #"{"Account":[]}"#, #"{"AuthSidecar":1}"#, #"{"Acc"#] {
            #expect(throws: CacheDocument.DocumentError.self, "\(bad)") { try CacheDocument(parsing: Array(bad.utf8)) }
        }
    }
}
