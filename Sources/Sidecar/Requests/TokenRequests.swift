import AuthCore
import JSON
import JSONRPC

/// `acquireTokenSilent`: a token from the cache, else from the refresh token; never a sign-in.
public struct AcquireTokenSilentRequest: RequestType {
    public typealias Response = TokenResponse
    public static let method = SidecarMethod.acquireTokenSilent.rawValue
    public static let parameters: Set<String> = [
        "scopes", "account", "authority", "forceRefresh", "claims", "correlationId", "sshCertificate", "proofOfPossession",
    ]

    /// The scopes (`nil`, or naming no resource: the session's default ones).
    public var scopes: [String]?
    /// Default: the current account.
    public var account: AccountReference?
    /// Another authority (an https URL; checked against the configured one by the engine).
    public var authority: String?
    public var forceRefresh = false
    public var claims: String?
    /// Sent to the service as client-request-id (`nil`: a fresh one).
    public var correlationId: String?
    /// An SSH certificate for this key instead of a bearer token.
    public var sshCertificate: SSHCertificateParams?
    /// A proof-of-possession token, and a signed request for this target.
    public var proofOfPossession: PopTargetParams?

    public init(scopes: [String]? = nil, account: AccountReference? = nil) {
        self.scopes = scopes
        self.account = account
    }

    public init(_ params: Params) throws(RPCError) {
        proofOfPossession = try PopTargetParams(params)
        sshCertificate = try SSHCertificateParams(params)
        scopes = try params.optional("scopes")
        account = try AuthJSON.accountReference(params)
        authority = try AuthJSON.authorityURL(params)
        forceRefresh = try params.optional("forceRefresh") ?? false
        claims = try params.optional("claims")
        correlationId = try AuthJSON.givenCorrelationId(params)
    }

    public var params: JSONValue {
        var object = JSONObject()
        if let scopes { object["scopes"] = JSONValue(scopes) }
        if let account { object["account"] = AuthJSON.json(account) }
        if let authority { object["authority"] = .string(authority) }
        if forceRefresh { object["forceRefresh"] = true }
        if let claims { object["claims"] = .string(claims) }
        if let correlationId { object["correlationId"] = .string(correlationId) }
        if let sshCertificate { object["sshCertificate"] = sshCertificate.json }
        if let proofOfPossession { object["proofOfPossession"] = proofOfPossession.json }
        return .object(object)
    }
}

/// `sshCertificate: {publicKey}`: an SSH certificate for this RSA OpenSSH public key.
public struct SSHCertificateParams: Sendable {
    /// The key's OpenSSH line (`ssh-rsa AAAA... [comment]`).
    public var publicKey: String
    /// The key's binding, made when the request was decoded at the edge (`nil` in one a client built).
    public private(set) var binding: SSHKeyBinding?

    public init(publicKey: String) { self.publicKey = publicKey }

    /// The member of `params`, if present, its key parsed (-32602 naming what is wrong).
    init?(_ params: Params) throws(RPCError) {
        guard let nested = try params.nested("sshCertificate", allowed: ["publicKey"]) else { return nil }
        guard let text: String = try nested.optional("publicKey") else {
            throw .invalidParams("missing member 'sshCertificate.publicKey'", member: "sshCertificate.publicKey")
        }
        publicKey = text
        do {
            binding = try SSHKeyBinding(openSSH: text)
        } catch {
            throw .invalidParams("sshCertificate.publicKey: \(error.description)", member: "sshCertificate.publicKey")
        }
    }

    var json: JSONValue { ["publicKey": .string(publicKey)] }
}

/// `proofOfPossession: {method, url, nonce?, clientClaims?}` or `{resourceId, nonce?,
/// clientClaims?}`: the resource request a PoP token's signed request is for, or the resource.
public struct PopTargetParams: Sendable {
    /// The HTTP method (empty for a resource id).
    public var method: String
    /// The resource URL (empty for a resource id).
    public var url: String
    /// The resource's id (kubelogin's Azure Arc shape: the SHR's `u`, for every request).
    public var resourceId: String?
    public var nonce: String?
    public var clientClaims: String?
    /// The target, checked, made when the request was decoded at the edge (`nil` in one a client built).
    public private(set) var target: PopRequestTarget?

    public init(method: String, url: String, nonce: String? = nil) {
        self.method = method
        self.url = url
        self.nonce = nonce
    }

    public init(resourceId: String, nonce: String? = nil, clientClaims: String? = nil) {
        method = ""
        url = ""
        self.resourceId = resourceId
        self.nonce = nonce
        self.clientClaims = clientClaims
    }

    /// The member of `params`, if present (beside `sshCertificate`: refused, one kind per request).
    init?(_ params: Params) throws(RPCError) {
        guard let target = try PopParams.target(params) else { return nil }
        self.init(target)
    }

    /// A checked target's members.
    init(_ target: PopRequestTarget) {
        method = target.method
        url = target.url
        resourceId = target.resourceId
        nonce = target.nonce
        clientClaims = target.clientClaims
        self.target = target
    }

    var json: JSONValue {
        var object: JSONObject = resourceId.map { ["resourceId": .string($0)] } ?? ["method": .string(method), "url": .string(url)]
        if let nonce { object["nonce"] = .string(nonce) }
        if let clientClaims { object["clientClaims"] = .string(clientClaims) }
        return .object(object)
    }
}

/// A token request's result (`acquireToken`, `acquireTokenSilent`): what its callers read, typed,
/// and the whole result as the engine encoded it (``result``, what `token --output json` prints).
public struct TokenResponse: ResponseType {
    public let accessToken: String
    /// `Bearer`, `pop` or `ssh-cert`.
    public let tokenType: String
    /// Unix seconds.
    public let expiresOn: Int64
    public let result: JSONValue

    public init(decoding result: JSONValue) throws(RPCError) {
        guard let token = result["accessToken"]?.stringValue else { throw .malformedResult("token", member: "accessToken") }
        guard let expiresOn = result["expiresOn"]?.intValue else { throw .malformedResult("token", member: "expiresOn") }
        accessToken = token
        tokenType = result["tokenType"]?.stringValue ?? "Bearer"
        self.expiresOn = expiresOn
        self.result = result
    }

    /// The tenant the token is for.
    public var tenantId: String { result["tenantId"]?.stringValue ?? "" }
    /// The account it is for (an Account object, or `null` for an app's own token).
    public var account: JSONValue { result["account"] ?? .null }
    /// A PoP token's signed HTTP request.
    public var signedHttpRequest: String? { result["signedHttpRequest"]?.stringValue }
    /// A PoP token's `Authorization` header value (`PoP <signed request>`).
    public var authorizationHeader: String? { result["authorizationHeader"]?.stringValue }
    /// An SSH certificate's line and what it says (`line`, `keyId`, `principals`, `validAfter`, `validBefore`).
    public var sshCertificate: JSONValue? { result["sshCertificate"] }
    /// The ID token, when the answer carries one.
    public var idToken: String? { result["idToken"]?.stringValue }
    /// Answered from the cache, with no request to the identity service.
    public var fromCache: Bool { result["fromCache"]?.boolValue ?? false }
}
