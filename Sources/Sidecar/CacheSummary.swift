import JSON
import JSONRPC
import TokenCache

/// What `status` shows of a file cache without a secret: each account's cached access tokens
/// (scopes, tenant, expiry), whether it has a refresh token, and the last failed refresh, as
/// the engine's `getCacheSummary` answers it.
public struct CacheSummary: ResponseType, Equatable {
    /// One cached access token: never its value (the engine's own type).
    public typealias AccessToken = CacheInventory.AccessToken

    public var accessTokens: [AccessToken] = []
    /// Home account IDs with a refresh token of this client (or its family).
    public var refreshTokenAccounts: Set<String> = []
    /// The last failed refresh of this client (`FileRefreshErrorLog`), if any.
    public var lastRefreshError: JSONObject?
    /// An app's client assertion: `source`, `expiresOn` of the one it gives now, `error` (never the assertion).
    public var clientAssertion: JSONObject?

    public init() {}

    /// The summary `getCacheSummary` answered (the engine read its own cache with the key it
    /// holds: the verb never opens the file).
    public init(decoding result: JSONValue) {
        accessTokens = (result["accessTokens"]?.arrayValue ?? []).map { token in
            AccessToken(
                homeAccountId: token["homeAccountId"]?.stringValue ?? "", tenant: token["tenantId"]?.stringValue ?? "",
                scopes: token["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? [], expiresOn: token["expiresOn"]?.intValue ?? 0)
        }
        refreshTokenAccounts = Set(result["refreshTokenAccounts"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        lastRefreshError = result["lastRefreshError"]?.objectValue
        clientAssertion = result["clientAssertion"]?.objectValue
    }

    /// The result as the engine sends it.
    public var result: JSONValue {
        var summary: JSONObject = [
            "accessTokens": .array(
                accessTokens.map {
                    [
                        "homeAccountId": .string($0.homeAccountId), "tenantId": .string($0.tenant), "scopes": JSONValue($0.scopes),
                        "expiresOn": .int($0.expiresOn),
                    ]
                }),
            "refreshTokenAccounts": JSONValue(refreshTokenAccounts.sorted()),
            "lastRefreshError": lastRefreshError.map(JSONValue.object) ?? .null,
        ]
        if let clientAssertion { summary["clientAssertion"] = .object(clientAssertion) }
        return .object(summary)
    }
}

/// `getCacheSummary`: what the cache holds for this client, without a secret.
public struct GetCacheSummaryRequest: RequestType {
    public typealias Response = CacheSummary
    public static let method = SidecarMethod.getCacheSummary.rawValue
    public static let parameters: Set<String> = []

    public init() {}
    public init(_ params: Params) throws(RPCError) {}
    public var params: JSONValue { [:] }
}
