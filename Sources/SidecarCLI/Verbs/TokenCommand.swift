import ArgumentParser

/// `auth-sidecar token`: a token acquired silently (cache, then refresh token), for shells:
/// `curl -H "Authorization: Bearer $(auth-sidecar token)" ...`.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print an access token, acquired silently (cache, then refresh token).",
        discussion: """
            Prints the bare token and a newline (or --output json: the whole result; --output az: the JSON \
            'az account get-access-token' prints, for scripts and AzureCliCredential). With --pop-method and \
            --pop-url: a proof-of-possession token, printed as the Authorization header value for that request \
            ('PoP <signed HTTP request>'). Exit status: \
            0 with a token, 2 when a sign-in is needed (run 'auth-sidecar login'), 1 on other failures.
            """)

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope to request (repeatable; default: the configured scopes).", valueName: "scope"))
    var scopes: [String] = []

    @Option(help: ArgumentHelp("A resource: the scope RESOURCE/.default, as az's --resource.", valueName: "resource"))
    var resource: String?

    @Option(help: ArgumentHelp("The account's username (default: the current account).", valueName: "user"))
    var account: String?

    @Option(help: ArgumentHelp("A tenant (ID or domain): the configured authority's host with this tenant.", valueName: "tenant"))
    var tenant: String?

    @Option(help: "token (the bare token), json (the whole result) or az (az account get-access-token's JSON).")
    var output: TokenRequest.Output = .token

    @Option(
        name: .customLong("pop-method"),
        help: ArgumentHelp("A proof-of-possession token for a request with this HTTP method (with --pop-url).", valueName: "method"))
    var popMethod: String?

    @Option(
        name: .customLong("pop-url"),
        help: ArgumentHelp("The URL of the request the PoP token is for; prints 'PoP <signed HTTP request>'.", valueName: "url"))
    var popURL: String?

    @Option(name: .customLong("pop-nonce"), help: ArgumentHelp("The resource's PoP nonce (WWW-Authenticate: PoP nonce=...).", valueName: "nonce"))
    var popNonce: String?

    @Flag(name: .customLong("force-refresh"), help: "Redeem the refresh token even when a cached token is valid.")
    var forceRefresh = false

    @OptionGroup var common: VerbOptions

    /// The options as a plain value, the one the fast path makes too.
    var request: TokenRequest {
        TokenRequest(
            scopes: scopes, resource: resource, account: account, tenant: tenant, output: output,
            forceRefresh: forceRefresh, popMethod: popMethod, popURL: popURL, popNonce: popNonce)
    }

    func validate() throws {
        if let invalidity = request.invalidity { throw ValidationError(invalidity) }
    }

    func run() throws {
        try VerbSession.run(common) { session throws(VerbFailure) in try request.run(session) }
    }
}

extension TokenRequest.Output: ExpressibleByArgument {}
