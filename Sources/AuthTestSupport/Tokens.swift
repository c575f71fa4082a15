import AuthCore
import AuthSeams

/// Builds unsigned JWTs and token endpoint answers.
public enum Tokens {
    public static func jwt(_ claims: String) -> String {
        Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + "."
    }

    /// The claims of the fake service's ID tokens: valid for client `client` at
    /// `https://login.microsoftonline.com` (tenant `tid-1`) until 2100.
    public static let idTokenClaims = """
        {"oid":"oid-1","tid":"tid-1","preferred_username":"alice@contoso.com","name":"Alice","aud":"client",\
        "iss":"https://login.microsoftonline.com/tid-1/v2.0","exp":4102444800}
        """

    public static let clientInfo = Base64URL.encode(Array(#"{"uid":"oid-1","utid":"tid-1"}"#.utf8))

    /// The client id of ``idTokenClaims``' audience, which the auth core's tests configure.
    public static let clientId = "client"

    /// A token endpoint answer; its ID token carries `nonce` when given (an interactive
    /// sign-in's ID token must echo the authorize request's nonce), and is for `audience`.
    public static func tokenResponse(
        accessToken: String, expiresIn: Int = 3600, refreshToken: String = "rt-1",
        scope: String = "User.Read openid profile offline_access",
        nonce: String? = nil, audience: String = clientId
    ) -> HTTPResponse {
        let claims = idTokenClaims.replacing(#""aud":"\#(clientId)""#, with: #""aud":"\#(audience)""#)
        let idToken = jwt(nonce.map { String(claims.dropLast()) + #","nonce":"\#($0)"}"# } ?? claims)
        let body = """
            {"token_type":"Bearer","access_token":"\(accessToken)","expires_in":\(expiresIn),"refresh_token":"\(refreshToken)",\
            "id_token":"\(idToken)","client_info":"\(clientInfo)","scope":"\(scope)"}
            """
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    /// Instance discovery for Microsoft's public cloud.
    public static let instanceDiscovery = HTTPResponse(
        status: 200,
        body: Array(
            """
            {"tenant_discovery_endpoint":"https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration",\
            "metadata":[{"preferred_network":"login.microsoftonline.com","preferred_cache":"login.windows.net",\
            "aliases":["login.microsoftonline.com","login.windows.net","login.microsoft.com","sts.windows.net"]}]}
            """.utf8))

    /// Discovery documents (instance or OIDC) for `request`, `nil` for anything else.
    public static func discoveryAnswer(for request: HTTPRequest) -> HTTPResponse? {
        if request.url.contains("/common/discovery/instance") { return instanceDiscovery }
        if request.url.hasSuffix("openid-configuration") { return discovery }
        return nil
    }

    public static let discovery = HTTPResponse(
        status: 200,
        body: Array(
            """
            {"authorization_endpoint":"https://login.microsoftonline.com/common/oauth2/v2.0/authorize",\
            "token_endpoint":"https://login.microsoftonline.com/common/oauth2/v2.0/token",\
            "end_session_endpoint":"https://login.microsoftonline.com/common/oauth2/v2.0/logout",\
            "issuer":"https://login.microsoftonline.com/{tenantid}/v2.0"}
            """.utf8))
}
