import Testing

@testable import TokenCache

/// ``CacheImport``'s rule on an Azure CLI-like cache: only our environments, only refresh
/// tokens our client can use (its own or a family's), their accounts, ID tokens and app
/// metadata; never an access token; an empty cache only.
@Suite struct CacheImportTests {
    static let az = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
    static let ours = "00001111-aaaa-2222-bbbb-3333cccc4444"

    static func refreshToken(_ home: String, _ env: String, _ client: String, family: String?) -> String {
        let familyMember = family.map { #", "family_id": "\#($0)""# } ?? ""
        return
            #""\#(home)-\#(env)-refreshtoken-\#(client)--": {"home_account_id": "\#(home)", "environment": "\#(env)", "credential_type": "RefreshToken", "client_id": "\#(client)", "secret": "rt-\#(home)-\#(env)-\#(client)"\#(familyMember)}"#
    }

    static func account(_ home: String, _ env: String, _ user: String) -> String {
        #""\#(home)-\#(env)-tid": {"home_account_id": "\#(home)", "environment": "\#(env)", "realm": "tid", "local_account_id": "l", "username": "\#(user)", "authority_type": "MSSTS"}"#
    }

    static let source = """
        {"AccessToken": {"a.t-login.microsoftonline.com-accesstoken-\(az)-tid-user.read": {"home_account_id": "a.t", "environment": "login.microsoftonline.com", "credential_type": "AccessToken", "client_id": "\(az)", "secret": "at", "realm": "tid", "target": "user.read", "cached_at": "1", "expires_on": "9999999999"}},
         "RefreshToken": {\(refreshToken("a.t", "login.microsoftonline.com", az, family: "1")),
                          \(refreshToken("b.t", "login.microsoftonline.com", "other-app", family: nil)),
                          \(refreshToken("c.t", "login.windows.net", ours, family: nil)),
                          \(refreshToken("d.t", "evil.example", az, family: "1"))},
         "Account": {\(account("a.t", "login.microsoftonline.com", "alice@contoso.com")), \(account("b.t", "login.microsoftonline.com", "bob@contoso.com")),
                     \(account("c.t", "login.windows.net", "carol@contoso.com")), \(account("d.t", "evil.example", "dave@contoso.com"))},
         "IdToken": {"a.t-login.microsoftonline.com-idtoken-\(az)-tid-": {"home_account_id": "a.t", "environment": "login.microsoftonline.com", "credential_type": "IdToken", "client_id": "\(az)", "realm": "tid", "secret": "id"}},
         "AppMetadata": {"appmetadata-login.microsoftonline.com-\(az)": {"client_id": "\(az)", "environment": "login.microsoftonline.com", "family_id": "1"}}}
        """

    let environments = ["login.microsoftonline.com", "login.windows.net", "login.microsoft.com", "sts.windows.net"]

    @Test func onlyUsableTokensOfOurEnvironmentsMoveWithTheirAccounts() throws {
        let document = try CacheDocument(parsing: Array(Self.source.utf8))
        let plan = CacheImport(from: document, environments: environments, clientId: Self.ours)
        #expect(plan.usernames == ["alice@contoso.com", "carol@contoso.com"])  // bob: another client's own token; dave: another host
        #expect(Set(plan.refreshTokens.map(\.secret)) == ["rt-a.t-login.microsoftonline.com-\(Self.az)", "rt-c.t-login.windows.net-\(Self.ours)"])
        #expect(plan.idTokens.count == 1 && plan.appMetadata.map(\.familyId) == ["1"])

        var ours = CacheDocument()
        #expect(ours.isEmptyOfSignIns)
        ours.apply(plan)
        #expect(!ours.isEmptyOfSignIns && ours.revision == 1)
        #expect(ours.all(ours.accessTokens).isEmpty)  // never another client's access token
        // The silent flow finds the family token for our client (its family status unknown).
        let tries = ours.refreshTokensToTry(homeAccountId: "a.t", environments: environments, clientId: Self.ours)
        #expect(tries.map(\.clientId) == [Self.az] && tries.first?.familyId == "1")
        #expect(ours.accountList().count == 2)
    }

    @Test func anotherAuthorityImportsNothing() throws {
        let document = try CacheDocument(parsing: Array(Self.source.utf8))
        #expect(CacheImport(from: document, environments: ["localhost:8443"], clientId: Self.ours).isEmpty)
        #expect(CacheImport(from: CacheDocument(), environments: environments, clientId: Self.ours).isEmpty)
    }
}
