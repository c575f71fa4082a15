import ArgumentParser
import JSON

/// `auth-sidecar token`: a token acquired silently (cache, then refresh token), for shells:
/// `curl -H "Authorization: Bearer $(auth-sidecar token)" ...`.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print an access token, acquired silently (cache, then refresh token).",
        discussion: """
            Prints the bare token and a newline (or --output json: the whole result). Exit status: \
            0 with a token, 2 when a sign-in is needed (run 'auth-sidecar login'), 1 on other failures.
            """)

    /// What `token` prints.
    enum Output: String, ExpressibleByArgument, CaseIterable {
        case token, json
    }

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope to request (repeatable; default: the configured scopes).", valueName: "scope"))
    var scopes: [String] = []

    @Option(help: ArgumentHelp("The account's username (default: the current account).", valueName: "user"))
    var account: String?

    @Option(help: ArgumentHelp("A tenant (ID or domain): the configured authority's host with this tenant.", valueName: "tenant"))
    var tenant: String?

    @Option(help: "token (the bare token) or json (the whole result).")
    var output: Output = .token

    @Flag(name: .customLong("force-refresh"), help: "Redeem the refresh token even when a cached token is valid.")
    var forceRefresh = false

    @OptionGroup var common: VerbOptions

    func validate() throws {
        if let tenant, !VerbRequests.isTenant(tenant) {
            throw ValidationError("--tenant must be a tenant ID or domain (no '/', '?', '#' or spaces)")
        }
    }

    func run() throws {
        try VerbSession.run(common) { session throws(VerbFailure) in
            var params = JSONObject()
            if !scopes.isEmpty { params["scopes"] = JSONValue(scopes) }
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
            case .token:
                guard let token = result["accessToken"]?.stringValue else {
                    throw VerbFailure(message: "the engine's answer has no accessToken")
                }
                session.print(token)
            }
        }
    }
}
