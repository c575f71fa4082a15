/// The cache keys of MSAL's cross-SDK schema, exactly as MSAL for Python 1.x makes them
/// (`TokenCache.key_makers` in `msal/token_cache.py`):
///
/// | entity | key |
/// |---|---|
/// | access token | `{home_account_id}-{environment}-accesstoken-{client_id}-{realm}-{target}` |
/// | bound access token (`ssh-cert`, `pop`) | `{home_account_id}-{environment}-accesstoken-{client_id}-{realm}-{target}--{token_type}-{key_id}` |
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
///
/// A bound token's key is msal-common's credential key for a token with an authentication
/// scheme (`…-{target}-{requested claims hash}-{scheme}`, `generateCredentialKey`), the claims
/// hash empty, with the `key_id` after it, so the certificates of any number of keys keep an
/// entry each: MSAL for Python's key has no `key_id` (it is commented out in its key maker, "so
/// ATs of different key_id can coexist"), so two keys' certificates would replace each other.
/// MSAL for Python finds such an entry by its fields (`key_id` in its query, its O(n) search),
/// as it does an entry msal-common wrote; it never removes it (its removal computes its own
/// key), so the writer removes expired bound tokens (``CacheDocument/save(_:)``).
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

    /// The access token's key; a bound token's (a `keyId`, or a `tokenType` other than
    /// `Bearer`) has the scheme and the key id after the target.
    public static func accessToken(
        homeAccountId: String, environment: String, clientId: String, realm: String, target: String,
        tokenType: String? = nil, keyId: String? = nil
    ) -> String {
        let scheme = tokenType.flatMap { $0.lowercased() == "bearer" ? nil : $0 }
        guard scheme != nil || keyId != nil else {
            return key(homeAccountId, environment, ["AccessToken", clientId, realm, target])
        }
        return key(homeAccountId, environment, ["AccessToken", clientId, realm, target, "", scheme ?? "", keyId ?? ""])
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
