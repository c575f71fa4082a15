import AuthSeams
import JSON
import TokenCache

/// The endpoints of an authority, from its OpenID Connect discovery document.
public struct OpenIDMetadata: Sendable, Equatable {
    public let authorizationEndpoint: String
    public let tokenEndpoint: String
    /// Advertised, else derived from the token endpoint (AAD serves `.../devicecode` without
    /// advertising it).
    public let deviceCodeEndpoint: String?
    public let endSessionEndpoint: String?
    public let issuer: String?
    /// Where the issuer publishes its signing keys.
    public let jwksURI: String?

    /// The cache realm: the first path segment of the token endpoint (as MSAL for Python).
    public var realm: String? {
        URLParts(tokenEndpoint)?.path.utf8.split(separator: UInt8(ascii: "/")).first.map { String(Substring($0)) }
    }

    init(json: JSONValue, kind: Authority.Kind) throws(AuthError) {
        guard let authorize = json["authorization_endpoint"]?.stringValue,
            let token = json["token_endpoint"]?.stringValue
        else { throw .malformed("the discovery document lacks authorization_endpoint or token_endpoint") }
        let optional = ["end_session_endpoint", "jwks_uri"].compactMap { json[$0]?.stringValue }
        for endpoint in [authorize, token] + optional {
            guard URLParts(endpoint)?.isSecureOrLoopback == true else {
                throw AuthError(.insecureAuthority, "the discovery document advertises a non-https endpoint")
            }
        }
        authorizationEndpoint = authorize
        tokenEndpoint = token
        let derived = kind != .oidc && token.hasSuffix("/token") ? String(token.dropLast("token".count)) + "devicecode" : nil
        deviceCodeEndpoint = json["device_authorization_endpoint"]?.stringValue ?? derived
        endSessionEndpoint = json["end_session_endpoint"]?.stringValue
        issuer = json["issuer"]?.stringValue
        jwksURI = json["jwks_uri"]?.stringValue
    }
}
