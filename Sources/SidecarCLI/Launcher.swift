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

/// Starts the sidecar: reserves stdout, sets up logging, builds the service from the
/// options and serves JSON-RPC on stdin/stdout until end of input, then exits.
public enum Launcher {
    /// The process entry point: the fast path for plain option lines, else swift-argument-parser.
    public static func main(arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        guard let options = LaunchOptions.quickParse(arguments) else {
            AuthSidecarCommand.main(arguments)
            Glibc.exit(0)
        }
        do {
            try run(options)
        } catch {
            AuthSidecarCommand.exit(withError: ValidationError(error.message))
        }
    }

    /// Serves until end of input; returns only by throwing a configuration error.
    static func run(_ options: LaunchOptions) throws(RPCError) -> Never {
        let protocolOutput = StandardStreams.reserveStdoutForProtocol()
        let logger = makeLogger(level: options.logLevel)
        var serviceOptions = SidecarService.Options()
        serviceOptions.diagnostics = options.enableDiagnostics
        serviceOptions.startup = try startupOverrides(options)
        let service = try SidecarService(options: serviceOptions, logger: logger)
        let server = JSONRPCServer(
            service: service, options: .init(maxMessageSize: options.maxMessageSize), logger: logger)
        TerminationSignals.onTerminate {
            logger.info("signal received; cancelling requests in flight")
            server.cancelAllAndStop()
            Glibc.exit(0)
        }
        Glibc.exit(server.run(input: STDIN_FILENO, output: protocolOutput))
    }

    /// The configuration from the configuration file overlaid with the other options.
    static func startupOverrides(_ options: LaunchOptions) throws(RPCError) -> ConfigurationOverrides {
        try ConfigurationSources.load(options).overrides
    }

    /// Logging to stderr (redacted) at `level`; call once per process.
    static func makeLogger(level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in StderrLogHandler(label: label, level: level) }
        return Logger(label: "auth-sidecar")
    }
}
