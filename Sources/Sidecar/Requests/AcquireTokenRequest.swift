import AuthCore
import JSON
import JSONRPC

/// `acquireToken`: a sign-in (browser, device code, or a pasted address) and its token.
public struct AcquireTokenRequest: RequestType {
    public typealias Response = TokenResponse
    public static let method = SidecarMethod.acquireToken.rawValue
    public static let parameters: Set<String> = [
        "scopes", "promptType", "loginHint", "domainHint", "account", "authority", "claims", "extraScopesToConsent",
        "extraQueryParameters", "flow", "correlationId", "sshCertificate", "proofOfPossession",
    ]
    /// The members that take a browser: a device code sign-in refuses them.
    static let browserOnly = [
        "promptType", "loginHint", "domainHint", "account", "extraScopesToConsent", "extraQueryParameters", "sshCertificate",
        "proofOfPossession",
    ]

    /// How the user signs in.
    public enum Flow: String, CaseIterable, Sendable {
        case browser, deviceCode, paste
    }

    public var flow = Flow.browser
    /// The scopes (`nil`, or naming no resource: the session's default ones).
    public var scopes: [String]?
    /// How insistently the sign-in page asks (`nil`: `promptIfNecessary`).
    public var prompt: PromptType?
    public var loginHint: String?
    public var domainHint: String?
    public var account: AccountReference?
    /// Another authority (an https URL; checked against the configured one by the engine).
    public var authority: String?
    public var claims: String?
    public var extraScopesToConsent: [String]?
    /// Added to the authorization request's query, in order.
    public var extraQueryParameters: [(String, String)] = []
    /// Sent to the service as client-request-id (`nil`: a fresh one).
    public var correlationId: String?
    /// An SSH certificate for this key instead of a bearer token.
    public var sshCertificate: SSHCertificateParams?
    /// A proof-of-possession token, and a signed request for this target.
    public var proofOfPossession: PopTargetParams?

    public init(flow: Flow = .browser, scopes: [String]? = nil) {
        self.flow = flow
        self.scopes = scopes
    }

    public init(_ params: Params) throws(RPCError) {
        flow = try params.optional("flow", oneOf: Flow.allCases.map(\.rawValue)).flatMap(Flow.init) ?? .browser
        correlationId = try AuthJSON.givenCorrelationId(params)
        if flow == .deviceCode {
            for key in Self.browserOnly where params.members[key] != nil {
                throw .invalidParams("'\(key)' does not apply to the device code flow", member: key)
            }
        }
        proofOfPossession = try PopTargetParams(params)
        sshCertificate = try SSHCertificateParams(params)
        scopes = try params.optional("scopes")
        prompt = try params.optional("promptType", oneOf: PromptType.allCases.map(\.rawValue)).flatMap(PromptType.init)
        loginHint = try params.optional("loginHint")
        domainHint = try params.optional("domainHint")
        account = try AuthJSON.accountReference(params)
        authority = try AuthJSON.authorityURL(params)
        claims = try params.optional("claims")
        extraScopesToConsent = try params.optional("extraScopesToConsent")
        extraQueryParameters = try AuthMethods.stringPairs(params, "extraQueryParameters")
    }

    public var params: JSONValue {
        var object = JSONObject()
        if flow != .browser { object["flow"] = .string(flow.rawValue) }
        if let scopes { object["scopes"] = JSONValue(scopes) }
        if let prompt { object["promptType"] = .string(prompt.rawValue) }
        if let loginHint { object["loginHint"] = .string(loginHint) }
        if let domainHint { object["domainHint"] = .string(domainHint) }
        if let account { object["account"] = AuthJSON.json(account) }
        if let authority { object["authority"] = .string(authority) }
        if let claims { object["claims"] = .string(claims) }
        if let extraScopesToConsent { object["extraScopesToConsent"] = JSONValue(extraScopesToConsent) }
        if !extraQueryParameters.isEmpty {
            var query = JSONObject()
            for (name, value) in extraQueryParameters { query[name] = .string(value) }
            object["extraQueryParameters"] = .object(query)
        }
        if let correlationId { object["correlationId"] = .string(correlationId) }
        if let sshCertificate { object["sshCertificate"] = sshCertificate.json }
        if let proofOfPossession { object["proofOfPossession"] = proofOfPossession.json }
        return .object(object)
    }
}
