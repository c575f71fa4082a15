import AuthSeams

/// The paste-back sign-in: the authorization URL with PKCE, `state` and `nonce` goes to the
/// user (``PasteBackPrompt``), who signs in in any browser on any machine and pastes back the
/// address it ended on (the redirect URI, on which nothing listens); the code is redeemed with
/// the verifier, which never left this host. For remote shells where no browser opens here,
/// no port can be forwarded and the tenant refuses the device code flow.
struct PasteBackFlow: Sendable {
    let configuration: ClientConfiguration
    let dependencies: AuthDependencies
    let resolver: AuthorityResolver

    func run(
        _ request: InteractiveRequest, account: Account?, prompt: any PasteBackPrompt, correlationId: String
    ) async throws -> TokenResult {
        let interactive = InteractiveFlow(configuration: configuration, dependencies: dependencies, resolver: resolver)
        let resolved = try await resolver.resolve(try configuration.authority(for: request.authority))
        let scopes = Scopes.requested(request.scopes, defaults: configuration.defaultScopes)
        let claims = try Scopes.mergedClaims(request.claims, capabilities: configuration.clientCapabilities)
        let pkce = PKCE()
        let state = PKCE.randomToken()
        let nonce = PKCE.randomToken()
        let redirectURI = Self.redirectURI(configuration.redirectURI)
        // As for the browser: a sign-in that cannot succeed fails before the user copies the URL.
        try await AuthorizePreflight(transport: dependencies.transport).check(
            authorizationEndpoint: resolved.metadata.authorizationEndpoint, clientId: configuration.clientId, redirectURI: redirectURI)
        let url = interactive.authorizeURL(
            metadata: resolved.metadata, scopes: scopes, request: request, account: account, claims: claims,
            redirectURI: redirectURI, pkce: pkce, state: state, nonce: nonce)
        dependencies.logger.info("waiting for the pasted address of a paste-back sign-in", metadata: ["redirect": "\(redirectURI)"])
        let pasted = try await pastedAddress(prompt, url: url)
        let response = try PastedAddress.response(pasted, redirectURI: redirectURI, expectedState: state)
        if let failure = InteractiveFlow.error(in: response, correlationId: correlationId) { throw failure }
        guard let code = response.code, !code.isEmpty else { throw AuthError(.pastedAddressRefused, "the pasted address carries no code") }
        do {
            return try await interactive.redeem(
                code,
                .init(
                    resolved: resolved, scopes: scopes, claims: claims, redirectURI: redirectURI, pkce: pkce, nonce: nonce,
                    binding: request.binding),
                clientInfo: response.clientInfo, correlationId: correlationId)
        } catch let error as AuthError {
            throw PastedAddress.fromAnotherSignIn(error) ?? error
        }
    }

    /// The redirect URI the paste-back sign-in sends: the configured loopback URI as it is
    /// (`http://localhost`, or with the port and path it names); nothing listens there.
    static func redirectURI(_ configured: String) -> String {
        guard let parsed = try? RedirectURI(parsing: configured) else { return "http://localhost" }
        return parsed.port.map { parsed.concrete(boundPort: $0) } ?? "http://\(parsed.host)\(parsed.path)"
    }

    /// What the user pasted, within ``ClientConfiguration/interactiveTimeout`` of real time (as
    /// the browser's redirect is waited for: a user's wait, not the service's clock).
    private func pastedAddress(_ prompt: any PasteBackPrompt, url: String) async throws -> String {
        let timeout = configuration.interactiveTimeout
        return try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { try await prompt.redirectedAddress(signInURL: url) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let pasted = first else {
                throw AuthError(.timeout, "no address was pasted within \(timeout)")
            }
            return pasted
        }
    }
}
