/// The OAuth 2.0 grants the flows redeem at the token endpoint, one type each.

/// `authorization_code` with its PKCE verifier (RFC 6749 4.1.3, RFC 7636).
struct AuthorizationCodeGrant {
    let code: String
    let redirectURI: String
    let verifier: String
    let scopes: [String]
    let claims: String?

    var fields: [(String, String)] {
        [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
            ("code_verifier", verifier), ("scope", scopes.joined(separator: " ")),
        ]
            + (claims.map { [("claims", $0)] } ?? [])
    }
}

/// `refresh_token` (RFC 6749 6).
struct RefreshTokenGrant {
    let refreshToken: String
    let scopes: [String]
    let claims: String?

    var fields: [(String, String)] {
        [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("scope", scopes.joined(separator: " "))]
            + (claims.map { [("claims", $0)] } ?? [])
    }
}

/// `urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 3.4).
struct DeviceCodeGrant {
    static let grantType = "urn:ietf:params:oauth:grant-type:device_code"
    let deviceCode: String

    var fields: [(String, String)] {
        [("grant_type", Self.grantType), ("device_code", deviceCode)]
    }
}

/// `client_credentials` with a client assertion (RFC 6749 4.4, RFC 7523 2.2): an app's own
/// token, authenticated by a JWT another issuer signed (workload identity federation).
struct ClientCredentialsGrant {
    static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    let scopes: [String]
    let assertion: String

    var fields: [(String, String)] {
        [
            ("grant_type", "client_credentials"), ("scope", scopes.joined(separator: " ")),
            ("client_assertion_type", Self.assertionType), ("client_assertion", assertion),
        ]
    }
}
