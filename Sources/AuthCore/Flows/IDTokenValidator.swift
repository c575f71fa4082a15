import AuthSeams

/// Checks an ID token before anything from its response is cached (OpenID Connect Core
/// 3.1.3.7): issuer, audience, lifetime, nonce, and for a generic OpenID provider the
/// signature against the issuer's published keys.
///
/// Microsoft authorities' signatures are not checked, as MSAL's public clients do not: the
/// token came straight from the token endpoint over verified TLS.
struct IDTokenValidator: Sendable {
    /// Clock skew allowed on `exp` and `nbf`.
    static let skew: Int64 = 300

    let clientId: String
    let authority: Authority
    let metadata: OpenIDMetadata
    /// The cache environments of the authority (its host's aliases are accepted issuers' origins).
    let environments: [String]
    let now: Int64
    /// The nonce sent with the authorization request.
    let nonce: String?
    let signingKeys: SigningKeyCache

    func validate(_ token: IDToken) async throws {
        try checkIssuer(token)
        guard token.audiences.contains(clientId) else {
            throw Self.refused("its audience is not this application's client id")
        }
        guard let expires = token.time("exp") else { throw Self.refused("it has no expiry (exp)") }
        guard expires + Self.skew >= now else { throw Self.refused("it expired at \(expires)") }
        if let notBefore = token.time("nbf"), notBefore - Self.skew > now {
            throw Self.refused("it is not valid before \(notBefore)")
        }
        if let nonce, token.nonce != nonce {
            throw Self.refused("its nonce does not match the request's (possible replay)")
        }
        if authority.kind == .oidc { try await checkSignature(token) }
    }

    /// `iss` must be the metadata's issuer (AAD's `{tenantid}` template filled with the
    /// token's `tid`); a Microsoft authority's token may also name an alias of its host (its
    /// origin's environment among the authority's: another port is never an alias).
    private func checkIssuer(_ token: IDToken) throws(AuthError) {
        guard let issuer = token.string("iss") else { throw Self.refused("it has no issuer (iss)") }
        guard let expected = metadata.issuer else {
            if authority.kind == .oidc { throw Self.refused("the provider's metadata names no issuer") }
            return
        }
        let tenant = token.tenantId ?? ""
        let filled = expected.replacing("{tenantid}", with: tenant)
        if Self.trimmed(issuer) == Self.trimmed(filled) { return }
        if authority.kind != .oidc, !tenant.isEmpty, let parts = URLParts(issuer), parts.scheme == "https",
            environments.contains(OriginKey(parts).environment), Self.trimmed(parts.path) == "/\(tenant)/v2.0"
        {
            return
        }
        throw Self.refused("its issuer \(issuer) is not the authority's (\(expected))")
    }

    private func checkSignature(_ token: IDToken) async throws {
        guard let algorithm = token.header["alg"]?.stringValue, ["RS256", "ES256"].contains(algorithm) else {
            throw Self.refused("it is not signed with RS256 or ES256")
        }
        guard let uri = metadata.jwksURI else { throw Self.refused("the provider's metadata names no jwks_uri") }
        let kid = token.header["kid"]?.stringValue
        let keys = try await signingKeys.keys(at: uri, including: kid)
        guard keys.verify(token.signature, of: token.signingInput, algorithm: algorithm, kid: kid) else {
            throw Self.refused("its signature does not verify with the issuer's keys")
        }
    }

    private static func trimmed(_ text: String) -> Substring {
        text.hasSuffix("/") ? text.dropLast() : Substring(text)
    }

    private static func refused(_ reason: String) -> AuthError {
        AuthError(.malformedResponse, "the ID token was refused: \(reason); nothing was cached")
    }
}
