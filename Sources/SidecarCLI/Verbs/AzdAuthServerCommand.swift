import Adapters
import ArgumentParser
import JSON
import Sidecar

/// `auth-sidecar azd-auth-server`: azd's external-authentication endpoint on 127.0.0.1
/// (``LocalTokenServer``), so `azd` uses the signed-in user's tokens. Prints the two `export`
/// lines, closes stdout (so `eval "$(auth-sidecar azd-auth-server &)"` returns), and serves
/// until SIGTERM/SIGINT, over one engine connection reopened when the agent restarts.
struct AzdAuthServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "azd-auth-server",
        abstract: "Serve azd's external-authentication endpoint on 127.0.0.1 with the signed-in user's tokens.",
        discussion: """
            Prints 'export AZD_AUTH_ENDPOINT=http://127.0.0.1:PORT' and 'export AZD_AUTH_KEY=KEY' (a new random key \
            each start), then serves until SIGTERM or SIGINT. azd's POST /token?api-version=2023-07-12-preview \
            {"scopes": [...], "tenantId"?} gets a token acquired silently (a tenant: the configured authority's host \
            with it; "claims": acquired for those claims); without a sign-in the reply is NotSignedInError naming \
            'auth-sidecar login'.
            """)

    @Option(help: ArgumentHelp("The port on 127.0.0.1 (default: any free port).", valueName: "port"))
    var port: UInt16 = 0

    @OptionGroup var common: VerbOptions

    func run() throws {
        try LocalEndpointVerb.serve(
            "azd-auth-server", common,
            settings: { session throws(VerbFailure) in try session.configuration["authority"]?.stringValue ?? "" },
            start: { authority, engine, logger throws(AdapterError) in
                try LocalTokenServer(
                    .azd(tokens: { request in Self.answer(request, authority: authority, engine: engine) }), port: port, logger: logger)
            })
    }

    /// The reply to a checked request: its scopes (and tenant, claims) asked of the engine.
    static func answer(_ request: AzdAuthProtocol.TokenRequest, authority: String, engine: EnginePool) -> AzdAuthProtocol.Reply {
        var silent = AcquireTokenSilentRequest(scopes: request.scopes)
        if let tenant = request.tenantId {
            if let problem = VerbRequests.tenantProblem(tenant, option: "tenantId") { return .failure(signInNeeded: false, problem) }
            guard let tenantAuthority = VerbRequests.authority(authority, tenant: tenant) else {
                return .failure(signInNeeded: false, "the configured authority \(authority) has no host to put a tenant on")
            }
            silent.authority = tenantAuthority
        }
        silent.claims = request.claims
        switch engine.token(silent) {
        case .success(let token): return .token(token.token, expiresOn: token.expiresOn)
        case .failure(let failure): return .failure(signInNeeded: failure.kind == .signInNeeded, failure.message)
        }
    }
}
