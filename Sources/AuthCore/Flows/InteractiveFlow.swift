import AuthSeams

/// Authorization code + PKCE through a browser and a loopback redirect (RFC 8252).
struct InteractiveFlow: Sendable {
    let configuration: ClientConfiguration
    let dependencies: AuthDependencies
    let resolver: AuthorityResolver

    func run(
        _ request: InteractiveRequest, account: Account?, browser: any BrowserLauncher,
        correlationId: String
    ) async throws -> TokenResult {
        let resolved = try await resolver.resolve(try configuration.authority(for: request.authority))
        let metadata = resolved.metadata
        let scopes = Scopes.requested(request.scopes, defaults: configuration.defaultScopes)
        let claims = try Scopes.mergedClaims(request.claims, capabilities: configuration.clientCapabilities)
        let pkce = PKCE()
        let state = PKCE.randomToken()
        let nonce = PKCE.randomToken()
        try await AuthorizePreflight(transport: dependencies.transport).check(
            authorizationEndpoint: metadata.authorizationEndpoint, clientId: configuration.clientId,
            redirectURI: configuration.redirectURI)

        let pending: any PendingRedirect
        do {
            pending = try await dependencies.listener.start(redirectURI: configuration.redirectURI)
        } catch {
            throw AuthError(.invalidConfiguration, "cannot listen for the redirect on \(configuration.redirectURI): \(error)")
        }
        let response: AuthorizationResponse
        do {
            let url = authorizeURL(
                metadata: metadata, scopes: scopes, request: request, account: account, claims: claims,
                redirectURI: pending.redirectURI, pkce: pkce, state: state, nonce: nonce)
            // Wait for the redirect while the browser opens: a client answering `openUrl` only
            // after the sign-in must not block it.
            async let redirect = pending.response(expectedState: state, timeout: configuration.interactiveTimeout)
            do {
                try await browser.open(url)
            } catch let error as BrowserError {
                throw AuthError(.browserUnavailable, "cannot open a browser: \(error); use flow \"deviceCode\" on a headless machine")
            }
            dependencies.logger.info("waiting for the browser sign-in", metadata: ["redirect": "\(pending.redirectURI)"])
            response = try await redirect
            await pending.close()
        } catch {
            await pending.close()
            if error is CancellationError { throw error }
            if case LoopbackError.timedOut? = error as? LoopbackError {
                throw AuthError(.timeout, "the browser sign-in did not finish within \(configuration.interactiveTimeout)")
            }
            throw error
        }
        if let failure = Self.error(in: response, correlationId: correlationId) { throw failure }
        guard let code = response.code, !code.isEmpty else { throw AuthError.malformed("the redirect carried no code") }
        return try await redeem(
            code,
            Redemption(
                resolved: resolved, scopes: scopes, claims: claims, redirectURI: pending.redirectURI, pkce: pkce, nonce: nonce,
                binding: request.binding),
            clientInfo: response.clientInfo, correlationId: correlationId)
    }

    /// What redeeming a sign-in's code needs: what its authorize request sent.
    struct Redemption: Sendable {
        var resolved: ResolvedAuthority
        var scopes: [String]
        var claims: String?
        var redirectURI: String
        var pkce: PKCE
        var nonce: String
        /// The key a bound token (`ssh-cert`, `pop`) is for.
        var binding: TokenBinding?
    }

    /// Redeems `code` with the sign-in's PKCE verifier, validates the answer (the ID token's
    /// nonce included) and saves it: the browser's and the paste-back sign-in's last step.
    /// `clientInfo`: the redirect's, for MSAL's routing hint (`X-AnchorMailbox`).
    func redeem(_ code: String, _ sent: Redemption, clientInfo: String? = nil, correlationId: String) async throws -> TokenResult {
        let grant = AuthorizationCodeGrant(
            code: code, redirectURI: sent.redirectURI, verifier: sent.pkce.verifier,
            scopes: Scopes.decorated(sent.scopes), claims: sent.claims)
        let client = TokenEndpointClient(
            transport: dependencies.transport, clientId: configuration.clientId,
            clock: dependencies.clock, logger: dependencies.logger)
        // MSAL's routing hint from the redirect's client_info, as it sends it.
        let anchor = clientInfo.flatMap { try? ClientInfo(raw: $0) }.map {
            TokenEndpointClient.anchorMailbox(homeAccountId: $0.homeAccountId)
        }
        let tokens = try await client.redeem(
            grant.fields, at: sent.resolved.metadata.tokenEndpoint, correlationId: correlationId, binding: sent.binding,
            headers: anchor ?? [])
        return try await TokenResponseHandler(configuration: configuration, dependencies: dependencies, resolver: resolver).handle(
            tokens,
            .init(
                authority: sent.resolved.authority, metadata: sent.resolved.metadata, requestedScopes: sent.scopes,
                correlationId: correlationId, nonce: sent.nonce, grant: "authorization_code", binding: sent.binding))
    }

    func authorizeURL(
        metadata: OpenIDMetadata, scopes: [String], request: InteractiveRequest, account: Account?,
        claims: String?, redirectURI: String, pkce: PKCE, state: String, nonce: String
    ) -> String {
        var fields: [(String, String)] = [
            ("client_id", configuration.clientId), ("response_type", "code"), ("redirect_uri", redirectURI),
            ("response_mode", "query"),
            ("scope", Scopes.decorated(scopes + request.extraScopesToConsent).joined(separator: " ")),
            ("state", state), ("nonce", nonce), ("code_challenge", pkce.challenge),
            ("code_challenge_method", pkce.method), ("client_info", "1"),
        ]
        if let prompt = request.prompt.oauthValue { fields.append(("prompt", prompt)) }
        if let hint = request.loginHint ?? account?.username, !hint.isEmpty { fields.append(("login_hint", hint)) }
        if let domainHint = request.domainHint { fields.append(("domain_hint", domainHint)) }
        if let claims { fields.append(("claims", claims)) }
        let reserved = Set(fields.map(\.0))
        fields += request.extraQueryParameters.filter { !reserved.contains($0.0) }
        let separator = metadata.authorizationEndpoint.contains("?") ? "&" : "?"
        return metadata.authorizationEndpoint + separator + FormEncoding.query(fields)
    }

    /// The error a redirect reports, if any (its kind from ``OAuthErrorClassifier``).
    static func error(in response: AuthorizationResponse, correlationId: String) -> AuthError? {
        guard let code = response.error else { return nil }
        let description = response.errorDescription ?? ""
        let kind = OAuthErrorClassifier.kind(
            of: OAuthErrorAnswer(error: code, description: description, suberror: response.errorSubcode),
            at: .authorizeRedirect)
        var error = AuthError(kind, description.isEmpty ? code : "\(code): \(description)")
        error.oauthError = code
        error.oauthErrorDescription = response.errorDescription
        error.suberror = response.errorSubcode
        error.correlationId = correlationId
        return error
    }
}
