/// The cache keys of MSAL's cross-SDK schema, exactly as MSAL for Python 1.x makes them
/// (`TokenCache.key_makers` in `msal/token_cache.py`):
///
/// | entity | key |
/// |---|---|
/// | access token | `{home_account_id}-{environment}-accesstoken-{client_id}-{realm}-{target}` |
/// | refresh token | `{home_account_id}-{environment}-refreshtoken-{client_id}--{target}` |
/// | ID token | `{home_account_id}-{environment}-idtoken-{client_id}-{realm}-` |
/// | account | `{home_account_id}-{environment}-{realm}` |
/// | app metadata | `appmetadata-{environment}-{client_id}` (not lower-cased) |
///
/// All but the app metadata key are lower-cased, except the path of an issuer's environment
/// (``CacheEnvironment/keyForm(_:)``: `idp.example/realms/Team` stays as it is, so two issuers
/// whose paths differ in case never share a key). `target` is the space-separated scopes as
/// stored (see ``ScopeSet/target``). Lookups never depend on a key's format: entries written
/// by another SDK under another key are found by their fields and removed by their own key.
public enum CacheKeys {
    /// The top-level sections of the document.
    public enum Section {
        public static let accessToken = "AccessToken"
        public static let refreshToken = "RefreshToken"
        public static let idToken = "IdToken"
        public static let account = "Account"
        public static let appMetadata = "AppMetadata"
        /// The sidecar's own state (MSAL for Python keeps unknown top-level keys).
        public static let sidecar = "AuthSidecar"
    }

    public static func accessToken(
        homeAccountId: String, environment: String, clientId: String, realm: String, target: String
    ) -> String {
        key(homeAccountId, environment, ["AccessToken", clientId, realm, target])
    }

    public static func refreshToken(
        homeAccountId: String, environment: String, clientId: String, target: String?
    ) -> String {
        key(homeAccountId, environment, ["RefreshToken", clientId, "", target ?? ""])
    }

    public static func idToken(
        homeAccountId: String, environment: String, clientId: String, realm: String
    ) -> String {
        key(homeAccountId, environment, ["IdToken", clientId, realm, ""])
    }

    public static func account(homeAccountId: String, environment: String, realm: String) -> String {
        key(homeAccountId, environment, [realm])
    }

    public static func appMetadata(environment: String, clientId: String) -> String {
        "appmetadata-\(environment)-\(clientId)"
    }

    /// `{home_account_id}-{environment}-{rest...}`, lower-cased but for the environment's path.
    private static func key(_ homeAccountId: String, _ environment: String, _ rest: [String]) -> String {
        ([homeAccountId.lowercased(), CacheEnvironment.keyForm(environment)] + rest.map { $0.lowercased() })
            .joined(separator: "-")
    }
}
