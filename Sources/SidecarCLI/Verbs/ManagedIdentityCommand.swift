import Adapters
import ArgumentParser
import JSON

/// `auth-sidecar managed-identity`: the App Service managed-identity endpoint on 127.0.0.1
/// (``LocalTokenServer``), so any Azure SDK's `ManagedIdentityCredential` gets the
/// signed-in user's tokens. Prints the two `export` lines, closes stdout (so
/// `eval "$(auth-sidecar managed-identity &)"` returns), and serves until SIGTERM/SIGINT.
struct ManagedIdentityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "managed-identity",
        abstract: "Serve the App Service managed-identity endpoint on 127.0.0.1 with the signed-in user's tokens.",
        discussion: """
            Prints 'export IDENTITY_ENDPOINT=http://127.0.0.1:PORT/msi/token' and 'export IDENTITY_HEADER=SECRET' \
            (a new random secret each start), then serves until SIGTERM or SIGINT. A request for resource R gets \
            the token for scope R/.default, acquired silently; without a sign-in the reply names 'auth-sidecar login'.
            """)

    @Option(help: ArgumentHelp("The port on 127.0.0.1 (default: any free port).", valueName: "port"))
    var port: UInt16 = 0

    @OptionGroup var common: VerbOptions

    func run() throws {
        try LocalEndpointVerb.serve(
            "managed-identity", common,
            settings: { session throws(VerbFailure) in try session.configuration["clientId"]?.stringValue ?? "" },
            start: { clientId, engine, logger throws(AdapterError) in
                try LocalTokenServer(.managedIdentity(clientId: clientId, tokens: { scope in engine.token(for: scope) }), port: port, logger: logger)
            })
    }
}
