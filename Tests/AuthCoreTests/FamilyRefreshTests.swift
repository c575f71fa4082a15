import AuthSeams
import AuthTestSupport
import Logging
import Testing
import TokenCache

@testable import AuthCore

/// Family refresh tokens (FOCI), as MSAL uses them: the client's own refresh token, then the
/// family's; a client the service says is outside the family (`client_mismatch`) stops there.
@Suite struct FamilyRefreshTests {
    let clock = ManualClock()
    let cache = TokenCache(store: MemoryTokenCacheStore())
    static let environment = "login.microsoftonline.com"

    func save(clientId: String, refreshToken: String, familyId: String?, account: String = "oid-1.tid-1") throws {
        try cache.save(
            TokenResponseRecord(
                clientId: clientId, environment: Self.environment, realm: "common", homeAccountId: account,
                localAccountId: "oid-1", username: "alice@contoso.com", scopes: ["User.Read"], accessToken: "at-\(clientId)",
                cachedAt: clock.now() - 7200, expiresOn: clock.now() - 3600, refreshToken: refreshToken,
                familyId: familyId))
    }

    /// The token endpoint: accepts `accepted`, says `client_mismatch` for `mismatched`, else `invalid_grant`.
    func service(accepts accepted: String, mismatched: String? = nil) -> FakeHTTPTransport {
        FakeHTTPTransport { request in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            let presented = FakeHTTPTransport.fields(request)["refresh_token"]
            if presented == accepted { return Tokens.tokenResponse(accessToken: "fresh-for-client") }
            let suberror = presented == mismatched ? #","suberror":"client_mismatch""# : ""
            return HTTPResponse(status: 400, body: Array(#"{"error":"invalid_grant","error_description":"AADSTS70000: no"\#(suberror)}"#.utf8))
        }
    }

    func silent(_ http: FakeHTTPTransport) async throws -> TokenResult {
        let app = PublicClientApplication(
            configuration: ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common")),
            dependencies: AuthDependencies(
                transport: http, cache: cache, clock: clock, browser: UnusedBrowser(),
                listener: UnusedListener(), logger: Logger(label: "test")))
        var request = SilentRequest()
        request.account = .homeAccountId("oid-1.tid-1")
        return try await app.acquireTokenSilently(request, correlationId: "c")
    }

    func tokenRequests(_ http: FakeHTTPTransport) -> [String?] {
        http.requests(to: "/token").map { FakeHTTPTransport.fields($0)["refresh_token"] }
    }

    @Test func aSecondClientOfTheFamilyUsesTheFamilyToken() async throws {
        try save(clientId: "sibling", refreshToken: "family-rt", familyId: "1")
        let http = service(accepts: "family-rt")
        #expect(try await silent(http).accessToken == "fresh-for-client")
        #expect(tokenRequests(http) == ["family-rt"])
    }

    @Test func theClientsOwnTokenComesFirstThenTheFamilys() async throws {
        try save(clientId: "sibling", refreshToken: "family-rt", familyId: "1")
        try save(clientId: "client", refreshToken: "own-rt", familyId: "1")
        let http = service(accepts: "family-rt")
        #expect(try await silent(http).accessToken == "fresh-for-client")
        #expect(tokenRequests(http) == ["own-rt", "family-rt"])
    }

    @Test func clientMismatchEndsTheSearch() async throws {
        try save(clientId: "sibling", refreshToken: "family-rt", familyId: "1")
        let http = service(accepts: "nothing", mismatched: "family-rt")
        let error = await #expect(throws: AuthError.self) { _ = try await silent(http) }
        #expect(error?.kind == .interactionRequired && error?.suberror == "client_mismatch")
        #expect(tokenRequests(http) == ["family-rt"])
    }

    @Test func aClientKnownOutsideTheFamilyNeverSendsTheFamilyToken() async throws {
        try save(clientId: "sibling", refreshToken: "family-rt", familyId: "1")
        try save(clientId: "client", refreshToken: "other-account-rt", familyId: nil, account: "oid-2.tid-1")
        let http = service(accepts: "family-rt")
        let error = await #expect(throws: AuthError.self) { _ = try await silent(http) }
        #expect(error?.suberror == "no_refresh_token")
        #expect(tokenRequests(http).isEmpty)
    }
}
