import JSON
import Testing

@testable import TokenCache

/// The document format: MSAL for Python's keys and fields, and round trips.
@Suite struct FormatTests {
    let fixture: JSONObject

    init() throws {
        let bytes = try #require(readBytes(Fixture.directory + "/msal_python_cache.json"))
        fixture = try #require(try JSONValue.parse(bytes).objectValue)
    }

    @Test func keysAreComputedExactlyAsMSALForPython() throws {
        // Every entry MSAL for Python wrote must be filed under the key this module computes.
        let document = try CacheDocument(parsing: readBytes(Fixture.directory + "/msal_python_cache.json") ?? [])
        func check<E>(_ section: CacheSection<E>, _ name: String) throws {
            let raw = try #require(fixture[name]?.objectValue)
            #expect(document.all(section).count == raw.count, "\(name): every entry parsed")
            for (key, entity) in document.all(section) { #expect(entity.cacheKey == key, "\(name)") }
        }
        try check(document.accessTokens, "AccessToken")
        try check(document.refreshTokens, "RefreshToken")
        try check(document.idTokens, "IdToken")
        try check(document.accounts, "Account")
        try check(document.appMetadata, "AppMetadata")
    }

    @Test func keyFormats() {
        let home = "uid.utid"
        #expect(
            CacheKeys.accessToken(
                homeAccountId: home, environment: "Login.Example", clientId: "C",
                realm: "T", target: "Mail.Read User.Read")
                == "uid.utid-login.example-accesstoken-c-t-mail.read user.read")
        #expect(
            CacheKeys.refreshToken(homeAccountId: home, environment: "e", clientId: "c", target: nil)
                == "uid.utid-e-refreshtoken-c--")
        #expect(
            CacheKeys.idToken(homeAccountId: home, environment: "e", clientId: "c", realm: "t")
                == "uid.utid-e-idtoken-c-t-")
        #expect(CacheKeys.account(homeAccountId: home, environment: "e", realm: "T") == "uid.utid-e-t")
        #expect(CacheKeys.appMetadata(environment: "e", clientId: "C") == "appmetadata-e-C")
        #expect(ScopeSet(["User.Read", "Mail.Read", "mail.read", "a"]).target == "Mail.Read User.Read a")
        // An issuer's path keeps its case (paths are case-sensitive); its host does not.
        #expect(
            CacheKeys.accessToken(
                homeAccountId: "S.Realms", environment: "IdP.Example:8443/realms/Team", clientId: "C", realm: "T",
                target: "openid")
                == "s.realms-idp.example:8443/realms/Team-accesstoken-c-t-openid")
        #expect(CacheKeys.account(homeAccountId: home, environment: "idp.example/realms/Team", realm: "T") == "uid.utid-idp.example/realms/Team-t")
    }

    @Test func environmentsCompareTheHostIgnoringCaseAndThePathExactly() {
        #expect(CacheEnvironment.same("Login.Microsoftonline.com", "login.microsoftonline.com"))
        #expect(CacheEnvironment.same("IDP.example/realms/Team", "idp.example/realms/Team"))
        #expect(!CacheEnvironment.same("idp.example/realms/Team", "idp.example/realms/team"))
        #expect(!CacheEnvironment.same("127.0.0.1:8443", "127.0.0.1"))
        #expect(!CacheEnvironment.same("127.0.0.1:8443", "127.0.0.1:9443"))
        #expect(["a.example", "idp.example/realms/Team"].containsEnvironment("IDP.EXAMPLE/realms/Team"))
        #expect(!["idp.example/realms/team"].containsEnvironment("idp.example/realms/Team"))
    }

    @Test func saveWritesTheSameEntriesAsMSALForPython() throws {
        // Alice's response in the fixture, saved by this module: every entry identical.
        var document = CacheDocument()
        var record = Fixture.record()
        let alice = try #require(fixture["IdToken"]?.objectValue?.first { $0.key.hasPrefix("aaaa") }?.value)
        record.idToken = alice["secret"]?.stringValue
        document.save(record)
        let ours = try #require(try JSONValue.parse(document.serialized()).objectValue)
        for section in ["AccessToken", "RefreshToken", "IdToken", "Account", "AppMetadata"] {
            let theirs = try #require(fixture[section]?.objectValue)
            for (key, value) in try #require(ours[section]?.objectValue) {
                #expect(theirs[key] == value, "\(section) \(key)")
            }
        }
    }

    @Test func roundTripKeepsUnknownSectionsFieldsAndUnparseableEntries() throws {
        let text = """
            {"AccessToken":{"k1":{"credential_type":"AccessToken","secret":"s","home_account_id":"h",
            "environment":"e","client_id":"c","realm":"r","target":"a","cached_at":"1","expires_on":"2",
            "extended_expires_on":"3","some_future_field":{"x":[1,2]},"home_account_id_null":null}},
            "Account":{"weird":{"no":"home"},"h-e-r":{"home_account_id":"h","environment":"e",
            "realm":"r","local_account_id":"l","username":"u","authority_type":"MSSTS","given_name":"G"}},
            "OtherSdk":{"anything":[true,null,1.5]},"AppMetadata":{}}
            """
        let document = try CacheDocument(parsing: Array(text.utf8))
        #expect(try JSONValue.parse(document.serialized()) == (try JSONValue.parse(text)).mergingEmptySections)
        var changed = document
        changed.save(Fixture.record())
        let after = try #require(try JSONValue.parse(changed.serialized()).objectValue)
        #expect(after["OtherSdk"] == ["anything": [true, nil, 1.5]])
        #expect(after["Account"]?["weird"] == ["no": "home"])
        #expect(after["AccessToken"]?["k1"]?["some_future_field"] == ["x": [1, 2]])
        #expect(after["Account"]?["h-e-r"]?["given_name"] == "G")
    }

    @Test func emptyInputIsAnEmptyCacheAndBadShapesAreErrors() throws {
        #expect(try CacheDocument(parsing: Array(" \n".utf8)).accountList().isEmpty)
        #expect(throws: CacheDocument.DocumentError.self) { try CacheDocument(parsing: Array("[]".utf8)) }
        #expect(throws: CacheDocument.DocumentError.self) { try CacheDocument(parsing: Array("{\"Account\":[]}".utf8)) }
        #expect(throws: CacheDocument.DocumentError.self) { try CacheDocument(parsing: Array("{\"Acc".utf8)) }
    }

    @Test func timesAreStringsOfUnixSecondsAndIntegersAreAccepted() throws {
        let text = #"{"AccessToken":{"k":{"secret":"s","environment":"e","client_id":"c","expires_on":1700000100,"cached_at":"1700000000"}}}"#
        let document = try CacheDocument(parsing: Array(text.utf8))
        let token = try #require(document.all(document.accessTokens).first?.entity)
        #expect(token.expiresOn == 1_700_000_100 && token.cachedAt == 1_700_000_000)
        #expect(token.json["expires_on"] == "1700000100")
    }
}

extension JSONValue {
    /// The value with the five known sections present (as the serializer writes them).
    var mergingEmptySections: JSONValue {
        guard var object = objectValue else { return self }
        for name in ["AccessToken", "Account", "IdToken", "RefreshToken", "AppMetadata"] where object[name] == nil {
            object[name] = .object(JSONObject())
        }
        return .object(object)
    }
}

/// App tokens (client credentials, no account) as MSAL for Python writes them.
@Suite struct AppTokenFormatTests {
    static func appRecord(_ secret: String) -> TokenResponseRecord {
        TokenResponseRecord(
            clientId: "app-1", environment: "login.microsoftonline.com", realm: "tid-1", homeAccountId: "", localAccountId: "",
            username: "", createsAccount: false, scopes: ["https://management.azure.com/.default"], accessToken: secret,
            cachedAt: 1_700_000_000, expiresOn: 1_700_003_600)
    }

    /// `home_account_id` null under MSAL's key with an empty home; found with `""` after a
    /// reload, whether the document is scanned or parsed whole; replaced by the next one.
    @Test(arguments: [false, true])
    func anAppTokenHasANullHomeAndIsFoundWithNone(scanning: Bool) throws {
        var document = CacheDocument()
        document.save(Self.appRecord("at-1"))
        document.save(Self.appRecord("at-2"))
        let bytes = document.serialized()
        let json = try #require(try JSONValue.parse(bytes)["AccessToken"]?.objectValue)
        let key = "-login.microsoftonline.com-accesstoken-app-1-tid-1-https://management.azure.com/.default"
        #expect(Array(json.keys) == [key] && json[key]?["home_account_id"] == .null && json[key]?["secret"] == "at-2")
        #expect(try JSONValue.parse(bytes)["Account"]?.objectValue?.isEmpty == true)
        let reloaded = try CacheDocument(parsing: bytes, scanning: scanning)
        let token = reloaded.accessToken(
            homeAccountId: "", environments: ["login.microsoftonline.com"], realm: "tid-1", clientId: "app-1",
            scopes: ScopeSet(["https://management.azure.com/.default"]), keyId: nil)
        #expect(token?.secret == "at-2" && token?.homeAccountId == "")
        var changed = reloaded
        changed.save(Self.appRecord("at-3"))
        #expect(changed.all(changed.accessTokens).map(\.entity.secret) == ["at-3"])
    }
}
