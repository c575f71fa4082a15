#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import JSON
import JSONRPC
import Logging
import Sidecar

/// The command line: options, then the JSON-RPC server on stdin/stdout until end of input.
public struct AuthSidecarCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "auth-sidecar",
        abstract: "Sign-in, token cache and Microsoft Graph for any language, as JSON-RPC 2.0 over stdin/stdout.",
        discussion: """
            Send newline-delimited JSON-RPC or LSP-framed (Content-Length) messages on stdin; \
            replies come on stdout in the same framing. Logs go to stderr. See protocol/README.md.
            """,
        version: ServerInfo.version,
        subcommands: [AgentCommand.self])

    @Option(name: .customLong("client-id"), help: "The application (client) ID.")
    var clientID: String?

    @Option(help: "The authority URL (default https://login.microsoftonline.com/common).")
    var authority: String?

    @Option(help: ArgumentHelp("A JSON file with configuration keys (clientId, authority, ...).", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("The token cache file, or 'memory' for no persistence.", valueName: "path"))
    var cache: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .warning

    @Option(name: .customLong("max-message-size"), help: "The largest message accepted, in bytes.")
    var maxMessageSize: Int = 4 << 20

    @Option(name: .customLong("http-timeout-seconds"),
            help: ArgumentHelp("The time limit of each HTTP request (1-300, default 30).", valueName: "seconds"))
    var httpTimeoutSeconds: Int?

    @Option(name: .customLong("interactive-timeout-seconds"),
            help: ArgumentHelp("How long a browser sign-in may take (1-3600, default 600).", valueName: "seconds"))
    var interactiveTimeoutSeconds: Int?

    @Flag(name: .customLong("enable-diagnostics"), help: .hidden)
    var enableDiagnostics = false

    public init() {}

    public func validate() throws {
        guard maxMessageSize >= 64 else { throw ValidationError("--max-message-size must be at least 64") }
    }

    /// The options as a plain value, for ``Launcher``.
    public var launchOptions: LaunchOptions {
        LaunchOptions(clientID: clientID, authority: authority, config: config, cache: cache, logLevel: logLevel,
                      maxMessageSize: maxMessageSize, enableDiagnostics: enableDiagnostics,
                      httpTimeoutSeconds: httpTimeoutSeconds, interactiveTimeoutSeconds: interactiveTimeoutSeconds)
    }

    public func run() throws {
        do {
            try Launcher.run(launchOptions)
        } catch {
            throw ValidationError(error.message)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
