/// Everything a silent token request needs, read in one transaction (one lock, one
/// consistent view of the file).
public struct SilentLookup: Sendable, Hashable {
    /// The account entity (of `realm` if present, else the home tenant's).
    public var account: CachedAccount?
    public var accessToken: CachedAccessToken?
    /// Best first; see ``TokenCache/refreshTokens(homeAccountId:environments:clientId:familyId:)``.
    public var refreshTokens: [CachedRefreshToken]
    public var idToken: CachedIdToken?
    public var appMetadata: AppMetadata?
}

extension TokenCache {
    /// The account, access token, refresh tokens, ID token and app metadata for a silent
    /// request, from one consistent view of the cache. The family used for refresh tokens is
    /// `familyId`, else the client's app metadata's, else `"1"` when the client's family
    /// status is unknown (MSAL tries the family refresh token then).
    public func silentLookup(
        homeAccountId: String, environments: [String], realm: String, clientId: String,
        scopes: [String], keyId: String? = nil, familyId: String? = nil
    ) throws -> SilentLookup {
        try store.transaction { document in
            let metadata = document.appMetadata(environments: environments, clientId: clientId)
            let family = familyId ?? (metadata == nil ? "1" : metadata?.familyId)
            return SilentLookup(
                account: document.account(homeAccountId: homeAccountId, environments: environments, realm: realm)
                    ?? document.account(homeAccountId: homeAccountId, environments: environments, realm: nil),
                accessToken: document.accessToken(
                    homeAccountId: homeAccountId, environments: environments, realm: realm,
                    clientId: clientId, scopes: ScopeSet(scopes), keyId: keyId),
                refreshTokens: document.refreshTokens(
                    homeAccountId: homeAccountId, environments: environments, clientId: clientId, familyId: family),
                idToken: document.idToken(
                    homeAccountId: homeAccountId, environments: environments, realm: realm, clientId: clientId),
                appMetadata: metadata)
        }
    }
}
