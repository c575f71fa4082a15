import JSON
import Testing

@testable import TokenCache

/// The domain accessor over a memory store: lookups, save, sign-out, current account.
@Suite struct TokenCacheTests {
    let cache = TokenCache(store: MemoryTokenCacheStore())
    let alice = Fixture.home("aaaaaaaa-0000-0000-0000-000000000001")
    let bob = Fixture.home("bbbbbbbb-0000-0000-0000-000000000002")

    func at(
        _ home: String, _ scopes: [String], realm: String = Fixture.tenant,
        environments: [String] = Fixture.aliases
    ) throws -> CachedAccessToken? {
        try cache.read {
            $0.accessToken(
                homeAccountId: home, environments: environments, realm: realm,
                clientId: Fixture.client, scopes: ScopeSet(scopes), keyId: nil)
        }
    }

    /// The refresh tokens `client` would redeem for `home`, best first.
    func rts(_ home: String, client: String = Fixture.client, family: String? = nil) throws -> [CachedRefreshToken] {
        try cache.read {
            $0.refreshTokens(homeAccountId: home, environments: Fixture.aliases, clientId: client, familyId: family)
        }
    }

    @Test func accessTokenMatchesASupersetOfTheScopesIgnoringCase() throws {
        try cache.save(Fixture.record(scopes: ["User.Read", "Mail.Read", "Calendars.Read"]))
        #expect(try at(alice, ["user.read"])?.secret == "at-alice")
        #expect(try at(alice, ["MAIL.READ", "user.read"])?.secret == "at-alice")
        #expect(try at(alice, []) != nil)
        #expect(try at(alice, ["User.Read", "Files.Read"]) == nil)
        #expect(try at(alice, ["User.Read"], realm: "other-tenant") == nil)
        #expect(try at(alice, ["User.Read"], environments: ["login.chinacloudapi.cn"]) == nil)
        #expect(try at(bob, ["User.Read"]) == nil)
        #expect(
            try cache.read {
                $0.accessToken(
                    homeAccountId: alice.uppercased(), environments: ["LOGIN.windows.net", Fixture.env],
                    realm: Fixture.tenant.uppercased(), clientId: Fixture.client,
                    scopes: ScopeSet(["User.Read"]), keyId: nil)
            } != nil)
    }

    @Test func savingRemovesAccessTokensWithIntersectingScopesOnly() throws {
        try cache.save(Fixture.record(scopes: ["User.Read", "Mail.Read"], secret: "one"))
        try cache.save(Fixture.record(scopes: ["Files.Read"], secret: "files"))
        try cache.save(Fixture.record(scopes: ["mail.read", "Calendars.Read"], secret: "two"))
        #expect(try at(alice, ["User.Read"]) == nil)  // removed: shared Mail.Read
        #expect(try at(alice, ["Mail.Read"])?.secret == "at-two")
        #expect(try at(alice, ["Files.Read"])?.secret == "at-files")
        // Another client's and another account's tokens are untouched.
        try cache.save(Fixture.record(uid: "bbbbbbbb-0000-0000-0000-000000000002", scopes: ["Mail.Read"], secret: "bob"))
        #expect(try at(alice, ["Mail.Read"])?.secret == "at-two")
    }

    @Test func boundTokensOfEveryKeyKeepAnEntryEachUntilTheyExpire() throws {
        let pas = "https://pas.windows.net/CheckMyAccess/Linux/.default"
        func cert(_ key: String, _ secret: String, at now: Int64 = Fixture.now) -> TokenResponseRecord {
            var record = Fixture.record(scopes: [pas], secret: secret, now: now)
            record.tokenType = "ssh-cert"
            record.keyId = key
            return record
        }
        func lookup(_ key: String?) throws -> CachedAccessToken? {
            try cache.read {
                $0.accessToken(
                    homeAccountId: alice, environments: Fixture.aliases, realm: Fixture.tenant,
                    clientId: Fixture.client, scopes: ScopeSet([pas]), keyId: key)
            }
        }
        try cache.save(Fixture.record(scopes: [pas], secret: "bearer"))
        for index in 0..<5 { try cache.save(cert("Key\(index)", "cert\(index)")) }
        for index in 0..<5 { #expect(try lookup("Key\(index)")?.secret == "at-cert\(index)") }
        #expect(try lookup(nil)?.secret == "at-bearer")  // a bearer token never answers a key, nor a key a bearer
        let keys = try cache.read { $0.all($0.accessTokens).map(\.key) }
        #expect(
            keys.contains(
                "\(alice)-\(Fixture.env)-accesstoken-\(Fixture.client)-\(Fixture.tenant)-\(pas)--ssh-cert-key0".lowercased()))
        // A key's new certificate replaces its own; a write removes the bound tokens that expired.
        try cache.save(cert("Key1", "renewed", at: Fixture.now + 4000))
        #expect(try lookup("Key1")?.secret == "at-renewed")
        #expect(try lookup("Key0") == nil && lookup("Key4") == nil)
        #expect(try cache.read { $0.all($0.accessTokens).count } == 2)  // and the bearer token
    }

    @Test func refreshTokenRotationKeepsOnlyTheNewest() throws {
        try cache.save(Fixture.record(scopes: ["User.Read"], secret: "first"))
        try cache.save(Fixture.record(scopes: ["Files.Read"], secret: "second", now: Fixture.now + 10))
        let tokens = try rts(alice)
        #expect(tokens.map(\.secret) == ["rt-second"])
        #expect(tokens.first?.lastModificationTime == Fixture.now + 10)
    }

    @Test func familyRefreshTokenServesAnotherFamilyClient() throws {
        let family = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
        try cache.save(Fixture.record(client: family, secret: "family", familyId: "1"))
        let other = "22222222-2222-2222-2222-222222222222"
        #expect(try rts(alice, client: other).first == nil)
        let frt = try rts(alice, client: other, family: "1").first
        #expect(frt?.secret == "rt-family" && frt?.familyId == "1")
        // The client's own token comes first once it has one.
        try cache.save(Fixture.record(client: other, secret: "own", familyId: "1"))
        let both = try rts(alice, client: other, family: "1")
        #expect(both.map(\.secret) == ["rt-own", "rt-family"])
        #expect(try cache.read { $0.appMetadata(environments: Fixture.aliases, clientId: family) }?.familyId == "1")
        // Unknown family status: a silent request tries the family token.
        let tried = try cache.read {
            $0.refreshTokensToTry(
                homeAccountId: alice, environments: Fixture.aliases,
                clientId: "33333333-3333-3333-3333-333333333333")
        }
        #expect(Set(tried.map(\.secret)) == ["rt-own", "rt-family"])
    }

    @Test func accountsIdTokensAndUsernames() throws {
        try cache.save(Fixture.record())
        try cache.save(Fixture.record(uid: "bbbbbbbb-0000-0000-0000-000000000002", username: "Bob@Contoso.com", secret: "bob"))
        try cache.save(Fixture.record(secret: "guest", realm: "guest-tenant"))  // alice as a guest
        #expect(try cache.read { $0.accountList() }.count == 3)
        #expect(try cache.read { $0.accounts(username: "bob@contoso.COM") }.map(\.homeAccountId) == [bob])
        #expect(try cache.read { $0.account(homeAccountId: alice, environments: Fixture.aliases, realm: nil) }?.realm == Fixture.tenant)
        #expect(try cache.read { $0.account(homeAccountId: alice, environments: Fixture.aliases, realm: "guest-tenant") } != nil)
        let idToken = try cache.read {
            $0.idToken(homeAccountId: alice, environments: Fixture.aliases, realm: "guest-tenant", clientId: Fixture.client)
        }
        #expect(idToken?.secret == "idt-guest")
    }

    @Test func removeAccountLeavesOtherAccountsAndClients() throws {
        let otherClient = "22222222-2222-2222-2222-222222222222"
        try cache.save(Fixture.record())
        try cache.save(Fixture.record(uid: "bbbbbbbb-0000-0000-0000-000000000002", username: "bob@contoso.com", secret: "bob"))
        try cache.save(Fixture.record(client: otherClient, scopes: ["Files.Read"], secret: "other"))
        try cache.setCurrentAccountId(alice, clientId: Fixture.client)
        let removed = try cache.removeAccount(homeAccountId: alice, environments: Fixture.aliases, clientId: Fixture.client)
        #expect(removed == 4)  // its AT, RT, ID token and account entity for this client
        #expect(try at(alice, ["User.Read"]) == nil)
        #expect(try rts(alice).first == nil)
        #expect(try rts(alice, client: otherClient).first?.secret == "rt-other")
        #expect(try at(bob, ["User.Read"])?.secret == "at-bob")
        #expect(try cache.read { $0.accountList() }.map(\.homeAccountId) == [bob])
        #expect(try cache.currentAccountId(clientId: Fixture.client) == nil)
        #expect(try cache.removeAccount(homeAccountId: alice, environments: Fixture.aliases, clientId: Fixture.client) == 0)
    }

    @Test func removeAccountOfAFamilyClientRemovesFamilyRefreshTokens() throws {
        let family = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
        let sibling = "22222222-2222-2222-2222-222222222222"
        try cache.save(Fixture.record(client: family, secret: "a", familyId: "1"))
        try cache.save(Fixture.record(client: sibling, secret: "b", familyId: "1"))
        try cache.removeAccount(homeAccountId: alice, environments: Fixture.aliases, clientId: family)
        #expect(try rts(alice, client: sibling, family: "1").isEmpty)
    }

    @Test func silentRefreshDoesNotRecreateASignedOutAccount() throws {
        var record = Fixture.record()
        record.createsAccount = false
        try cache.save(record)
        #expect(try cache.read { $0.accountList() }.isEmpty)
        #expect(try at(alice, ["User.Read"]) != nil)
    }

    @Test func removeRefreshTokenAndCurrentAccount() throws {
        try cache.save(Fixture.record())
        let rt = try #require(try rts(alice).first)
        #expect(try cache.removeRefreshToken(rt))
        #expect(try !cache.removeRefreshToken(rt))
        #expect(try cache.currentAccountId(clientId: Fixture.client) == nil)
        try cache.setCurrentAccountId(bob, clientId: Fixture.client)
        try cache.setCurrentAccountId(alice, clientId: "another-client")
        #expect(try cache.currentAccountId(clientId: Fixture.client) == bob)
        #expect(try cache.currentAccountId(clientId: "another-client") == alice)
    }

    @Test func expiryHelpers() {
        let token = CachedAccessToken(
            homeAccountId: "h", environment: "e", clientId: "c", realm: "r", target: "a",
            secret: "s", cachedAt: 0, expiresOn: 1000, refreshOn: 500)
        #expect(!token.isExpired(at: 699) && token.isExpired(at: 700) && !token.isExpired(at: 999, margin: 0))
        #expect(!token.needsRefresh(at: 499) && token.needsRefresh(at: 500))
        #expect(token.extendedExpiresOn == 1000)
    }
}
