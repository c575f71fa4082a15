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
struct AuthSidecarCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth-sidecar",
        abstract: "Sign-in, token cache and Microsoft Graph for any language, as JSON-RPC 2.0 over stdin/stdout.",
        discussion: """
            Send newline-delimited JSON-RPC or LSP-framed (Content-Length) messages on stdin; \
            replies come on stdout in the same framing. Logs go to stderr. See protocol/README.md.
            """,
        version: ServerInfo.version)

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

    @Flag(name: .customLong("enable-diagnostics"), help: .hidden)
    var enableDiagnostics = false

    func validate() throws {
        guard maxMessageSize >= 64 else { throw ValidationError("--max-message-size must be at least 64") }
    }

    func run() throws {
        let protocolOutput = StandardStreams.reserveStdoutForProtocol()
        let logger = Self.makeLogger(level: logLevel)
        var options = SidecarService.Options()
        options.diagnostics = enableDiagnostics
        do {
            options.startup = try startupOverrides()
        } catch {
            throw ValidationError(error.message)
        }
        let service: SidecarService
        do {
            service = try SidecarService(options: options, logger: logger)
        } catch {
            throw ValidationError(error.message)
        }
        let server = JSONRPCServer(
            service: service, options: .init(maxMessageSize: maxMessageSize), logger: logger)
        TerminationSignals.onTerminate {
            logger.info("signal received; cancelling requests in flight")
            server.cancelAllAndStop()
            Glibc.exit(0)
        }
        let status = server.run(input: STDIN_FILENO, output: protocolOutput)
        Glibc.exit(status)
    }

    /// The configuration from `--config` overlaid with the other options.
    private func startupOverrides() throws(RPCError) -> ConfigurationOverrides {
        var fromFile = ConfigurationOverrides()
        if let config {
            guard let text = ProcessEnvironment.readTextFile(config) else {
                throw .invalidParams("cannot read --config file \(config)")
            }
            let value: JSONValue
            do { value = try JSONValue.parse(text) } catch {
                throw .invalidParams("--config file \(config) is not valid JSON: \(error)")
            }
            fromFile = try ConfigurationOverrides(params: value)
        }
        var fromFlags = ConfigurationOverrides()
        fromFlags.clientId = clientID
        fromFlags.authority = authority
        if let cache { fromFlags.cache = cache == "memory" ? .memory : .file(path: cache) }
        return fromFlags.merged(over: fromFile)
    }

    private static func makeLogger(level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in StderrLogHandler(label: label, level: level) }
        return Logger(label: "auth-sidecar")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
