import Adapters
import JSON

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

    /// Why these options cannot go together, if they cannot.
    var invalidity: String? {
        if resource != nil, !scopes.isEmpty { return "--resource and --scope cannot be combined" }
        if let resource, resource.isEmpty { return "--resource must not be empty" }
        if let tenant, let problem = VerbRequests.tenantProblem(tenant, option: "--tenant") { return problem }
        return nil
    }

    /// Asks the engine for a token silently and prints it in the chosen shape.
    func run(_ session: VerbSession) throws(VerbFailure) {
        // A silent request never starts a sign-in, so it may go out right behind `initialize`
        // (with --tenant, `params` has already read `initialize`'s reply for the authority).
        let result = try session.call("acquireTokenSilent", .object(try params(session)), account: account, pipelined: true)
        try print(result, to: session)
    }

    private func params(_ session: VerbSession) throws(VerbFailure) -> JSONObject {
        var params = JSONObject()
        if !scopes.isEmpty { params["scopes"] = JSONValue(scopes) }
        if let resource { params["scopes"] = [.string(AzAccessToken.scope(forResource: resource))] }
        if let account { params["account"] = ["username": .string(account)] }
        if let tenant {
            let configured = try session.configuration["authority"]?.stringValue ?? ""
            guard let authority = VerbRequests.authority(configured, tenant: tenant) else {
                throw VerbFailure(message: "the configured authority \(configured) has no host to put a tenant on")
            }
            params["authority"] = .string(authority)
        }
        if forceRefresh { params["forceRefresh"] = true }
        return params
    }

    private func print(_ result: JSONValue, to session: VerbSession) throws(VerbFailure) {
        switch output {
        case .json: session.print(result.jsonText)
        case .az:
            guard let az = VerbOutput.az(result) else { throw VerbFailure(message: "the engine's answer has no accessToken or expiresOn") }
            session.print(az.jsonText)
        case .token:
            guard let token = result["accessToken"]?.stringValue else {
                throw VerbFailure(message: "the engine's answer has no accessToken")
            }
            session.print(token)
        }
    }
}
