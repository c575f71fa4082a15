import AuthSeams
import AuthTestSupport
import Logging
import Testing
import TokenCache

@testable import AuthCore

/// `accountListing` (tenants, current) and `setCurrentAccount` over a cache of two accounts.
@Suite struct AccountListingTests {
    let clock = ManualClock()
    let cache = TokenCache(store: MemoryTokenCacheStore())

    private func app() throws -> PublicClientApplication {
        let configuration = ClientConfiguration(
            clientId: "client", authority: try Authority("https://login.microsoftonline.com/organizations"))
        let transport = FakeHTTPTransport { request throws(HTTPError) in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            throw .network("no token endpoint in this test")
        }
        let dependencies = AuthDependencies(
            transport: transport, cache: cache, clock: clock, browser: UnusedBrowser(),
            listener: UnusedListener(), logger: Logger(label: "test"))
        return PublicClientApplication(configuration: configuration, dependencies: dependencies)
    }

    /// A sign-in's tokens for `oid` (home tenant `tid-1`) under `realm`; `tid` other than
    /// the home tenant: a silent request's tokens for another tenant (no account entity).
    private func seed(_ oid: String, _ username: String, realm: String, tid: String = "tid-1") throws {
        try cache.save(
            TokenResponseRecord(
                clientId: "client", environment: "login.microsoftonline.com", realm: realm, homeAccountId: "\(oid).tid-1",
                localAccountId: oid, username: username, createsAccount: tid == "tid-1", scopes: ["User.Read"], accessToken: "at-\(oid)-\(realm)",
                cachedAt: clock.now(), expiresOn: clock.now() + 3600, refreshToken: "rt-\(oid)",
                idToken: Tokens.jwt(#"{"oid":"\#(oid)","tid":"\#(tid)","preferred_username":"\#(username)"}"#)))
    }

    @Test func listsTenantsAndTheCurrentAccount() async throws {
        try seed("oid-1", "alice@contoso.com", realm: "organizations")
        try seed("oid-1", "alice@contoso.com", realm: "tid-2", tid: "tid-2")
        try seed("oid-2", "bob@contoso.com", realm: "organizations")
        let application = try app()
        let none = try await application.accountListing()
        #expect(none.map(\.isCurrent) == [false, false])  // two accounts, none marked

        let switched = try await application.setCurrentAccount(.username("BOB@contoso.com"))
        #expect(switched.account.homeAccountId == "oid-2.tid-1" && switched.previous == nil)
        let listing = try await application.accountListing()
        let byUser = Dictionary(uniqueKeysWithValues: listing.map { ($0.account.username, $0) })
        #expect(byUser["alice@contoso.com"]?.tenants == ["tid-1", "tid-2"])
        #expect(byUser["bob@contoso.com"]?.tenants == ["tid-1"])
        #expect(byUser["bob@contoso.com"]?.isCurrent == true && byUser["alice@contoso.com"]?.isCurrent == false)
        #expect(try await application.currentAccount().current?.username == "bob@contoso.com")

        let back = try await application.setCurrentAccount(.homeAccountId("oid-1.tid-1"))
        #expect(back.previous?.username == "bob@contoso.com")
        let now = try await application.currentAccount()
        #expect(now.current?.username == "alice@contoso.com" && now.previous?.username == "bob@contoso.com")
    }

    @Test func anUnknownAccountIsNotFound() async throws {
        try seed("oid-1", "alice@contoso.com", realm: "organizations")
        let error = await #expect(throws: AuthError.self) { try await app().setCurrentAccount(.username("nobody@contoso.com")) }
        #expect(error?.kind == .accountNotFound)
    }
}
