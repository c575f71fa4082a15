import AuthCore
import JSON

/// One Microsoft Graph call, as `callGraph` describes it.
public struct GraphRequest: Sendable {
    /// Under `{graphEndpoint}{apiVersion}`, e.g. `/me`, `/users`, `/$batch`.
    public var path = "/me"
    public var method = "GET"
    /// `v1.0` or `beta`.
    public var apiVersion = "v1.0"
    public var query: [(String, String)] = []
    public var headers: [(String, String)] = []
    /// Sent as `application/json` (a string with an explicit Content-Type goes as is).
    public var body: JSONValue?
    public var account: AccountReference?
    /// Default: the configured scopes.
    public var scopes: [String]?
    /// Follow `@odata.nextLink` and merge the pages' `value` arrays.
    public var allPages = false
    /// The most pages followed when `allPages` is set.
    public var maxPages = 20
    /// Per request (`callGraph`'s `timeoutSeconds`); `nil`: the transport's default
    /// (`httpTimeoutSeconds`).
    public var timeout: Duration?
    /// What the call's token may be for (`nil`: whatever the cache has for the scopes).
    public var tokenCheck: GraphTokenCheck?

    public init() {}
}
