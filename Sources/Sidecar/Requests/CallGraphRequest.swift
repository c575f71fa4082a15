import AuthCore
import JSON
import JSONRPC

/// `callGraph`: a Microsoft Graph request made with the account's token (the sidecar sets
/// `Authorization`), each member checked here, at the edge.
public struct CallGraphRequest: RequestType {
    public typealias Response = GraphCallResponse
    public static let method = SidecarMethod.callGraph.rawValue
    public static let parameters: Set<String> = [
        "path", "method", "apiVersion", "query", "headers", "body", "account", "scopes", "allPages", "maxPages", "timeoutSeconds",
        "correlationId",
    ]

    /// A path under the Graph endpoint, starting with `/` (`nil`: `/me`).
    public var path: String?
    /// GET, POST, PUT, PATCH or DELETE (`nil`: GET).
    public var httpMethod: String?
    /// `v1.0` or `beta` (`nil`: `v1.0`).
    public var apiVersion: String?
    public var query: [(String, String)] = []
    /// Extra headers (never `Authorization`, never a control character).
    public var headers: [(String, String)] = []
    public var body: JSONValue?
    public var account: AccountReference?
    /// The token's scopes (`nil`, or naming no resource: the session's default ones).
    public var scopes: [String]?
    /// Follow `@odata.nextLink` (at most ``maxPages`` pages, 1 to 100).
    public var allPages = false
    public var maxPages: Int?
    /// 1 to 300 seconds.
    public var timeoutSeconds: Int?
    public var correlationId: String?

    public init(path: String? = nil) { self.path = path }

    public init(_ params: Params) throws(RPCError) {
        if let path: String = try params.optional("path") {
            guard path.hasPrefix("/"), !path.contains("://"), !path.contains("/../"), !path.hasSuffix("/.."),
                !AuthMethods.hasControlCharacters(path)
            else {
                throw .invalidParams("'path' must be a path under the Graph endpoint, starting with /", member: "path")
            }
            self.path = path
        }
        httpMethod = try params.optional("method", oneOf: ["GET", "POST", "PUT", "PATCH", "DELETE"])
        apiVersion = try params.optional("apiVersion", oneOf: ["v1.0", "beta"])
        query = try AuthMethods.stringPairs(params, "query")
        headers = try AuthMethods.stringPairs(params, "headers", controlCharacters: false)
        if headers.contains(where: { $0.0.lowercased() == "authorization" }) {
            throw .invalidParams("'headers' may not set Authorization: the sidecar does", member: "headers.Authorization")
        }
        body = params.members["body"]
        account = try AuthJSON.accountReference(params)
        scopes = try params.optional("scopes")
        allPages = try params.optional("allPages") ?? false
        if let maxPages: Int = try params.optional("maxPages") {
            guard (1...100).contains(maxPages) else { throw .invalidParams("'maxPages' must be 1 to 100", member: "maxPages") }
            self.maxPages = maxPages
        }
        if let seconds: Int = try params.optional("timeoutSeconds") {
            guard (1...300).contains(seconds) else { throw .invalidParams("'timeoutSeconds' must be 1 to 300", member: "timeoutSeconds") }
            timeoutSeconds = seconds
        }
        correlationId = try AuthJSON.givenCorrelationId(params)
    }

    public var params: JSONValue {
        var object = JSONObject()
        if let path { object["path"] = .string(path) }
        if let httpMethod { object["method"] = .string(httpMethod) }
        if let apiVersion { object["apiVersion"] = .string(apiVersion) }
        if !query.isEmpty { object["query"] = Self.object(query) }
        if !headers.isEmpty { object["headers"] = Self.object(headers) }
        if let body { object["body"] = body }
        if let account { object["account"] = AuthJSON.json(account) }
        if let scopes { object["scopes"] = JSONValue(scopes) }
        if allPages { object["allPages"] = true }
        if let maxPages { object["maxPages"] = .int(Int64(maxPages)) }
        if let timeoutSeconds { object["timeoutSeconds"] = .int(Int64(timeoutSeconds)) }
        if let correlationId { object["correlationId"] = .string(correlationId) }
        return .object(object)
    }

    private static func object(_ pairs: [(String, String)]) -> JSONValue {
        var object = JSONObject()
        for (name, value) in pairs { object[name] = .string(value) }
        return .object(object)
    }
}

/// `callGraph`'s result: Graph's status, headers and body, as the engine relays them.
public struct GraphCallResponse: ResponseType {
    public let result: JSONValue
    public init(decoding result: JSONValue) throws(RPCError) { self.result = result }
}
