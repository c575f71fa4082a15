import Adapters
import ArgumentParser
import JSON

/// `auth-sidecar token`: a token acquired silently (cache, then refresh token), for shells:
/// `curl -H "Authorization: Bearer $(auth-sidecar token)" ...`.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print an access token, acquired silently (cache, then refresh token).",
        discussion: """
            Prints the bare token and a newline (or --output json: the whole result; --output az: the JSON \
            'az account get-access-token' prints, for scripts and AzureCliCredential). Exit status: \
            0 with a token, 2 when a sign-in is needed (run 'auth-sidecar login'), 1 on other failures.
            """)

    /// What `token` prints.
    enum Output: String, ExpressibleByArgument, CaseIterable {
        case token, json, az
    }

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope to request (repeatable; default: the configured scopes).", valueName: "scope"))
    var scopes: [String] = []

    @Option(help: ArgumentHelp("A resource: the scope RESOURCE/.default, as az's --resource.", valueName: "resource"))
    var resource: String?

    @Option(help: ArgumentHelp("The account's username (default: the current account).", valueName: "user"))
    var account: String?

    @Option(help: ArgumentHelp("A tenant (ID or domain): the configured authority's host with this tenant.", valueName: "tenant"))
    var tenant: String?

    @Option(help: "token (the bare token), json (the whole result) or az (az account get-access-token's JSON).")
    var output: Output = .token

    @Flag(name: .customLong("force-refresh"), help: "Redeem the refresh token even when a cached token is valid.")
    var forceRefresh = false

    @OptionGroup var common: VerbOptions

    func validate() throws {
        if resource != nil, !scopes.isEmpty { throw ValidationError("--resource and --scope cannot be combined") }
        if let resource, resource.isEmpty { throw ValidationError("--resource must not be empty") }
        if let tenant, !VerbRequests.isTenant(tenant) {
            throw ValidationError("--tenant must be a tenant ID or domain (no '/', '?', '#' or spaces)")
        }
    }

    func run() throws {
        try VerbSession.run(common) { session throws(VerbFailure) in
            var params = JSONObject()
            if !scopes.isEmpty { params["scopes"] = JSONValue(scopes) }
            if let resource { params["scopes"] = [.string(AzAccessToken.scope(forResource: resource))] }
            if let account { params["account"] = ["username": .string(account)] }
            if let tenant {
                let configured = session.configuration["authority"]?.stringValue ?? ""
                guard let authority = VerbRequests.authority(configured, tenant: tenant) else {
                    throw VerbFailure(message: "the configured authority \(configured) has no host to put a tenant on")
                }
                params["authority"] = .string(authority)
            }
            if forceRefresh { params["forceRefresh"] = true }
            let result = try session.call("acquireTokenSilent", .object(params), account: account)
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
}
