import TokenCache

/// The tenants an account holds tokens for in the cache (see ``ListedAccount/tenants``).
enum AccountTenants {
    /// Realms that name no tenant (a multi-tenant authority's path segment).
    static let metaRealms: Set<String> = ["common", "organizations", "consumers"]

    static func of(_ account: Account, environments: [String], in document: CacheDocument) -> [String] {
        var tenants = [account.tenantId]
        for token in document.idTokens(homeAccountId: account.homeAccountId, environments: environments) {
            if isMeta(token.realm) {
                if let tid = (try? IDToken.claims(of: token.secret))?["tid"]?.stringValue { tenants.append(tid) }
            } else {
                tenants.append(token.realm)
            }
        }
        tenants += document.accessTokenRealms(homeAccountId: account.homeAccountId, environments: environments)
            .filter { !isMeta($0) }
        var seen = Set<String>()
        return tenants.filter { !$0.isEmpty && !isMeta($0) && seen.insert($0.lowercased()).inserted }
    }

    private static func isMeta(_ realm: String) -> Bool { metaRealms.contains(realm.lowercased()) }
}
