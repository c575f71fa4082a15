/// A token and what it is for.
public struct TokenResult: Sendable {
    public var accessToken: String
    public var tokenType: String
    /// Unix seconds.
    public var expiresOn: Int64
    public var scopes: [String]
    public var account: Account
    public var idToken: String?
    public var tenantId: String
    public var authority: String
    public var correlationId: String
    public var fromCache: Bool
    /// The signed HTTP request of a proof-of-possession token when its backend signed it (the
    /// broker, which keeps the key); `nil`: the caller signs with the cache's key.
    public var signedHttpRequest: String? = nil
}
