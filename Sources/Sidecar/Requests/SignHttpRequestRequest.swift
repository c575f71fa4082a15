import AuthCore
import JSON
import JSONRPC

/// `signHttpRequest`: a fresh signed HTTP request for a resource request (its `method` and
/// `url`, or a `resourceId`, at the top of the params) with the account's PoP token.
public struct SignHttpRequestRequest: RequestType {
    public typealias Response = SignedHttpRequestResponse
    public static let method = SidecarMethod.signHttpRequest.rawValue
    public static let parameters = PopParams.signMembers

    /// The resource request (or resource) the signed request is for.
    public var target: PopTargetParams
    public var scopes: [String]?
    public var account: AccountReference?
    public var correlationId: String?

    public init(target: PopTargetParams) { self.target = target }

    public init(_ params: Params) throws(RPCError) {
        target = PopTargetParams(try PopParams.target(of: params))
        scopes = try params.optional("scopes")
        account = try AuthJSON.accountReference(params)
        correlationId = try AuthJSON.givenCorrelationId(params)
    }

    public var params: JSONValue {
        var object = target.json.objectValue ?? [:]
        if let scopes { object["scopes"] = JSONValue(scopes) }
        if let account { object["account"] = AuthJSON.json(account) }
        if let correlationId { object["correlationId"] = .string(correlationId) }
        return .object(object)
    }
}

/// `signHttpRequest`'s result.
public struct SignedHttpRequestResponse: ResponseType {
    public var signedHttpRequest: String
    /// `PoP <signed request>`.
    public var authorizationHeader: String
    public var tokenType: String
    public var expiresOn: Int64
    public var fromCache: Bool
    public var correlationId: String

    init(
        signedHttpRequest: String, authorizationHeader: String, tokenType: String, expiresOn: Int64, fromCache: Bool,
        correlationId: String
    ) {
        self.signedHttpRequest = signedHttpRequest
        self.authorizationHeader = authorizationHeader
        self.tokenType = tokenType
        self.expiresOn = expiresOn
        self.fromCache = fromCache
        self.correlationId = correlationId
    }

    public init(decoding result: JSONValue) throws(RPCError) {
        guard let shr = result["signedHttpRequest"]?.stringValue, let header = result["authorizationHeader"]?.stringValue,
            let expiresOn = result["expiresOn"]?.intValue
        else { throw .malformedResult(SignHttpRequestRequest.method, member: "signedHttpRequest") }
        signedHttpRequest = shr
        authorizationHeader = header
        tokenType = result["tokenType"]?.stringValue ?? "pop"
        self.expiresOn = expiresOn
        fromCache = result["fromCache"]?.boolValue ?? false
        correlationId = result["correlationId"]?.stringValue ?? ""
    }

    public var result: JSONValue {
        [
            "signedHttpRequest": .string(signedHttpRequest), "authorizationHeader": .string(authorizationHeader),
            "tokenType": .string(tokenType), "expiresOn": .int(expiresOn), "fromCache": .bool(fromCache),
            "correlationId": .string(correlationId),
        ]
    }
}
