import JSON
import JSONRPC
import TokenCache

/// What `status` shows of a file cache without a secret: each account's cached access tokens
/// (scopes, tenant, expiry), whether it has a refresh token, and the last failed refresh.
/// Read as `cache export` reads it (the file on disk, with the configured layer's key).
public struct CacheSummary: Sendable, Equatable {
    /// One cached access token: never its value.
    public struct AccessToken: Sendable, Equatable {
        public var homeAccountId: String
        public var tenant: String
        public var scopes: [String]
        public var expiresOn: Int64
    }

    public var accessTokens: [AccessToken] = []
    /// Home account IDs with a refresh token of this client (or its family).
    public var refreshTokenAccounts: Set<String> = []
    /// The last failed refresh of this client (`FileRefreshErrorLog`), if any.
    public var lastRefreshError: JSONObject?

    /// The summary of the file cache `cache`/`cacheProtection` name, for `clientId`.
    /// - Throws: -51005 when there is no file cache or it cannot be opened.
    public static func read(_ overrides: ConfigurationOverrides, clientId: String) throws(RPCError) -> CacheSummary {
        let bytes = try CacheExport.plaintext(overrides)
        var summary = CacheSummary(document: (try? JSONValue.parse(bytes)) ?? [:], clientId: clientId)
        if case .file(let path, _, _)? = overrides.cache {
            let record = FileRefreshErrorLog(path: path + FileRefreshErrorLog.suffix).read()
            if record?["clientId"]?.stringValue.map({ $0.lowercased() == clientId.lowercased() }) ?? true {
                summary.lastRefreshError = record
            }
        }
        return summary
    }

    /// The summary of a cache document (MSAL's JSON) for `clientId`.
    public init(document: JSONValue, clientId: String) {
        let client = clientId.lowercased()
        for case (_, .object(let entry)) in document[CacheKeys.Section.accessToken]?.objectValue ?? [:] {
            guard entry["client_id"]?.stringValue?.lowercased() == client, let home = entry["home_account_id"]?.stringValue else { continue }
            let expiresOn = entry["expires_on"].flatMap { $0.stringValue.flatMap { Int64($0) } ?? $0.intValue } ?? 0
            let scopes = (entry["target"]?.stringValue ?? "").split(separator: " ").map(String.init)
            accessTokens.append(
                AccessToken(homeAccountId: home, tenant: entry["realm"]?.stringValue ?? "", scopes: scopes, expiresOn: expiresOn))
        }
        accessTokens.sort { ($0.homeAccountId, $0.expiresOn) < ($1.homeAccountId, $1.expiresOn) }
        for case (_, .object(let entry)) in document[CacheKeys.Section.refreshToken]?.objectValue ?? [:] {
            guard let home = entry["home_account_id"]?.stringValue else { continue }
            if entry["client_id"]?.stringValue?.lowercased() == client || entry["family_id"]?.stringValue?.isEmpty == false {
                refreshTokenAccounts.insert(home)
            }
        }
    }
}
