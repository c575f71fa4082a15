import Adapters
import JSON
import Sidecar

/// What `auth-sidecar token` asks for and prints, as a plain value: ``TokenCommand``
/// (swift-argument-parser) and ``PlainCommandLine`` (the fast path) both produce one.
struct TokenRequest: Equatable {
    /// What `token` prints.
    enum Output: String, CaseIterable {
        case token, json, az
    }

    var scopes: [String] = []
    var resource: String?
    var account: String?
    var tenant: String?
    var output: Output = .token
    var forceRefresh = false
    /// A proof-of-possession token for this request (`--pop-method`, `--pop-url`, `--pop-nonce`).
    var popMethod: String?
    var popURL: String?
    var popNonce: String?

    /// Why these options cannot go together, if they cannot.
    var invalidity: String? {
        if resource != nil, !scopes.isEmpty { return "--resource and --scope cannot be combined" }
        if let resource, resource.isEmpty { return "--resource must not be empty" }
        if let tenant, let problem = VerbRequests.tenantProblem(tenant, option: "--tenant") { return problem }
        if (popMethod == nil) != (popURL == nil) { return "--pop-method and --pop-url go together" }
        if popNonce != nil, popMethod == nil { return "--pop-nonce needs --pop-method and --pop-url" }
        if popMethod != nil, output == .az { return "--output az has no proof-of-possession form" }
        return nil
    }

    /// Asks the engine for a token silently and prints it in the chosen shape.
    func run(_ session: VerbSession) throws(VerbFailure) {
        // A silent request never starts a sign-in, so it may go out right behind `initialize`
        // (with --tenant, `params` has already read `initialize`'s reply for the authority).
        let result = try session.call(try request(session), account: account, pipelined: true)
        try print(result, to: session)
    }

    private func request(_ session: VerbSession) throws(VerbFailure) -> AcquireTokenSilentRequest {
        var request = AcquireTokenSilentRequest(scopes: scopes.isEmpty ? nil : scopes, account: account.map { .username($0) })
        if let resource { request.scopes = [AzAccessToken.scope(forResource: resource)] }
        if let tenant {
            let configured = try session.configuration["authority"]?.stringValue ?? ""
            guard let authority = VerbRequests.authority(configured, tenant: tenant) else {
                throw VerbFailure(message: "the configured authority \(configured) has no host to put a tenant on")
            }
            request.authority = authority
        }
        request.forceRefresh = forceRefresh
        if let popMethod, let popURL { request.proofOfPossession = PopTargetParams(method: popMethod, url: popURL, nonce: popNonce) }
        return request
    }

    private func print(_ result: TokenResponse, to session: VerbSession) throws(VerbFailure) {
        switch output {
        case .json: session.print(result.result.jsonText)
        case .az: session.print(VerbOutput.az(result).jsonText)
        case .token where popMethod != nil:
            guard let header = result.authorizationHeader else { throw VerbFailure(message: "the engine's answer has no authorizationHeader") }
            session.print(header)
        case .token: session.print(result.accessToken)
        }
    }
}
