import JSON

/// The device authorization grant (RFC 8628): for machines without a browser.
struct DeviceCodeFlow: Sendable {
    let configuration: ClientConfiguration
    let dependencies: AuthDependencies
    let resolver: AuthorityResolver

    func run(_ request: DeviceCodeRequest, correlationId: String) async throws -> TokenResult {
        let resolved = try await resolver.resolve(try configuration.authority(for: request.authority))
        let authority = resolved.authority
        let metadata = resolved.metadata
        let scopes = Scopes.requested(request.scopes, defaults: configuration.defaultScopes)
        let claims = try Scopes.mergedClaims(request.claims, capabilities: configuration.clientCapabilities)
        let client = TokenEndpointClient(
            transport: dependencies.transport, clientId: configuration.clientId,
            clock: dependencies.clock, logger: dependencies.logger)

        var fields = [("scope", Scopes.decorated(scopes).joined(separator: " "))]
        if let claims { fields.append(("claims", claims)) }
        guard let endpoint = metadata.deviceCodeEndpoint else {
            throw AuthError(.invalidConfiguration, "the provider offers no device authorization endpoint; use the browser flow")
        }
        let answer: JSONValue
        do {
            answer = try await client.post(fields, to: endpoint, correlationId: correlationId)
        } catch let error as AuthError
            where OAuthErrorClassifier.kind(of: OAuthErrorAnswer(error), at: .deviceCodePolling) == .deviceCodeBlocked
        {
            throw Self.blocked(error)
        }
        guard let deviceCode = answer["device_code"]?.stringValue, let userCode = answer["user_code"]?.stringValue,
            let verificationUri = (answer["verification_uri"] ?? answer["verification_url"])?.stringValue
        else { throw AuthError.malformed("the device code answer lacks device_code, user_code or verification_uri") }
        let now = dependencies.clock.now()
        // Bounded: the service's numbers must not overflow the arithmetic below.
        let expiresOn = now + min(max(TokenResponse.seconds(answer["expires_in"]) ?? 900, 0), 86_400)
        var interval = min(max(TokenResponse.seconds(answer["interval"]) ?? 5, 1), 600)
        request.onUserCode(
            DeviceCodeInfo(
                userCode: userCode, verificationUri: verificationUri,
                message: answer["message"]?.stringValue ?? "To sign in, open \(verificationUri) and enter the code \(userCode).",
                expiresOn: expiresOn))

        var retry = TransientRetry(.polling)
        var wait = interval
        while true {
            try await dependencies.clock.sleep(for: .seconds(wait))
            do {
                let tokens = try await client.redeem(
                    DeviceCodeGrant(deviceCode: deviceCode).fields,
                    at: metadata.tokenEndpoint, correlationId: correlationId, retrying: nil)
                return try await TokenResponseHandler(configuration: configuration, dependencies: dependencies, resolver: resolver).handle(
                    tokens,
                    .init(
                        authority: authority, metadata: metadata, requestedScopes: scopes,
                        correlationId: correlationId, grant: "device_code"))
            } catch var error as AuthError {
                switch OAuthErrorClassifier.meaning(of: OAuthErrorAnswer(error), at: .deviceCodePolling) {
                case .keepPolling:
                    retry.answered()
                    if dependencies.clock.now() >= expiresOn { throw Self.expired(error) }
                    wait = interval
                case .slowDown:
                    retry.answered()
                    interval += 5
                    wait = interval
                case .fails(.timeout):
                    throw Self.expired(error)
                case .fails(.deviceCodeBlocked):
                    throw Self.blocked(error)
                case .fails(.userCanceled):
                    error.kind = .userCanceled
                    error.message = "the user declined the device code sign-in"
                    throw error
                case .fails:
                    wait = try retryDelay(after: error, retry: &retry, interval: interval, expiresOn: expiresOn)
                }
            }
        }
    }

    /// The wait before polling again after a transient failure; rethrows `error` when it is
    /// not transient, too many came in a row, or the code would expire first.
    private func retryDelay(
        after error: AuthError, retry: inout TransientRetry, interval: Int64,
        expiresOn: Int64
    ) throws(AuthError) -> Int64 {
        guard let delay = retry.delay(after: error, interval: interval),
            dependencies.clock.now() + delay < expiresOn
        else { throw error }
        dependencies.logger.notice(
            "device code polling failed; retrying",
            metadata: [
                "error": "\(error.kind.rawValue)", "httpStatus": "\(error.httpStatus.map(String.init) ?? "none")",
                "retryInSeconds": "\(delay)", "attempt": "\(retry.consecutiveFailures)",
            ])
        return delay
    }

    /// The one line for a tenant whose Conditional Access refuses the device code flow, with
    /// the ways that still work (the service's words stay in `oauthErrorDescription`).
    static func blocked(_ error: AuthError) -> AuthError {
        var blocked = error
        blocked.kind = .deviceCodeBlocked
        let code = OAuthErrorClassifier.deviceCodeRefusals.first { OAuthErrorAnswer(error).has(serviceCode: $0) } ?? 53003
        blocked.message =
            "the tenant blocks sign-in with a device code (AADSTS\(code): Conditional Access); sign in with flow \"paste\" "
            + "(open the URL in any browser, then paste back the address it ends on) or \"browser\""
        return blocked
    }

    private static func expired(_ error: AuthError) -> AuthError {
        var expired = error
        expired.kind = .timeout
        expired.message = "the device code expired before the user signed in"
        return expired
    }
}
