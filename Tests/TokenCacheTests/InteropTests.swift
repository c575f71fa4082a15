import JSON
import Testing

@testable import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// Interoperability with MSAL for Python, both ways.
@Suite struct InteropTests {
    let alice = Fixture.home("aaaaaaaa-0000-0000-0000-000000000001")
    let bob = Fixture.home("bbbbbbbb-0000-0000-0000-000000000002")

    /// A cache written by MSAL for Python 1.39 (`Fixtures/make_msal_fixture.py`) is read.
    @Test func readsACacheWrittenByMSALForPython() throws {
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        writeBytes(path, try #require(readBytes(Fixture.directory + "/msal_python_cache.json")))
        let cache = TokenCache(store: FileTokenCacheStore(path: path))

        #expect(try cache.read { $0.accountList() }.map(\.username) == ["alice@contoso.com", "bob@contoso.com"])
        let document = try cache.snapshot()
        let account = try #require(document.account(homeAccountId: alice, environments: Fixture.aliases, realm: nil))
        #expect(account.localAccountId == "aaaaaaaa-0000-0000-0000-000000000001")
        #expect(account.authorityType == "MSSTS" && account.accountSource == "authorization_code")
        let token = try #require(
            document.accessToken(
                homeAccountId: alice, environments: Fixture.aliases, realm: Fixture.tenant,
                clientId: Fixture.client, scopes: ScopeSet(["user.read"]), keyId: nil))
        #expect(token.secret == "at-alice" && token.expiresOn == 1_700_003_600 && token.refreshOn == 1_700_001_800)
        #expect(token.extendedExpiresOn == 1_700_007_200 && token.tokenType == "Bearer")
        #expect(
            document.refreshTokens(
                homeAccountId: alice, environments: Fixture.aliases,
                clientId: Fixture.client, familyId: nil
            ).first?.secret == "rt-alice")
        #expect(
            document.idToken(
                homeAccountId: alice, environments: Fixture.aliases, realm: Fixture.tenant,
                clientId: Fixture.client)?.secret.hasPrefix("eyJ") == true)
        // Bob's family refresh token (written for the Azure CLI's client) serves another family client.
        let frt = document.refreshTokens(
            homeAccountId: bob, environments: Fixture.aliases,
            clientId: "22222222-2222-2222-2222-222222222222", familyId: "1"
        ).first
        #expect(frt?.secret == "rt-bob")
        // A change keeps what MSAL and the other SDK wrote.
        try cache.setCurrentAccountId(alice, clientId: Fixture.client)
        let written = try #require(try JSONValue.parse(readBytes(path) ?? []).objectValue)
        #expect(written["OtherSdkSection"] == ["kept": ["by": "another SDK", "n": 1]])
        #expect(written["Account"]?.objectValue?.count == 2 && written["RefreshToken"]?.objectValue?.count == 2)
    }

    /// A cache written here is read by MSAL for Python: `get_accounts()` lists the account and
    /// `acquire_token_silent` returns the access token from the cache.
    @Test func msalForPythonReadsACacheWrittenHere() throws {
        guard pythonHasMSAL() else {
            if isCI {
                Issue.record("python3 with msal is required in CI (pip install msal)")
            } else {
                print("skipped: python3 with the msal package is not available")
            }
            return
        }
        let temp = TemporaryDirectory()
        defer { temp.remove() }
        let path = temp.path + "/cache.json"
        let cache = TokenCache(store: FileTokenCacheStore(path: path))
        let now = Int64(time(nil))
        try cache.save(Fixture.record(scopes: ["User.Read", "openid", "profile"], now: now))
        try cache.setCurrentAccountId(alice, clientId: Fixture.client)

        let script = Fixture.directory + "/msal_reads_cache.py"
        let authority = "https://login.microsoftonline.com/\(Fixture.tenant)"
        let run = runShell("python3 '\(script)' '\(path)' \(Fixture.client) \(authority) User.Read")
        #expect(run.status == 0, "\(run.output)")
        let lastLine = run.output.split(separator: "\n").last.map(String.init) ?? ""
        let seen = try #require(try JSONValue.parse(lastLine).objectValue, "\(run.output)")
        #expect(seen["accounts"] == [["home_account_id": .string(alice), "username": "alice@contoso.com"]])
        #expect(seen["access_token"] == "at-alice")
        #expect(seen["token_source"] == "cache")
        #expect(seen["refresh_tokens"] == ["rt-alice"])
        #expect(seen["other_section"] == ["current_account": [Fixture.client: .string(alice)]])
    }
}
