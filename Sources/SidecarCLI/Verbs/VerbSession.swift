#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import JSON
import Agent
import JSONRPC
import Logging
import Sidecar

/// The options every verb takes: the configuration sources, and whether to use an agent.
struct VerbOptions: ParsableArguments {
    @OptionGroup var configuration: ConfigurationOptions

    @Flag(name: .customLong("no-agent"), help: "Do not use a running agent; run the engine in this process.")
    var noAgent = false
}

/// A verb's configured connection to the engine (an agent or in-process), and its output.
///
/// `open` reserves stdout for the verb's output (anything else that writes to fd 1 lands on
/// stderr), reads the configuration sources, connects, and sends `initialize` with them and
/// `browser: "client"`, so the verb opens the sign-in page itself (``URLOpener``) and
/// `deviceCode` messages reach the user on stderr.
final class VerbSession {
    let client: JSONRPCClient
    let connection: EngineConnection
    let agentSocket: String
    let sources: ConfigurationSources
    /// The configuration in force, as the engine reports it (`initialize`'s result).
    let configuration: JSONValue
    /// Logs to stderr at the `--log-level`.
    let logger: Logger
    private let output: Int32

    private init(client: JSONRPCClient, connection: EngineConnection, agentSocket: String,
                 sources: ConfigurationSources, configuration: JSONValue, logger: Logger, output: Int32) {
        self.client = client
        self.connection = connection
        self.agentSocket = agentSocket
        self.sources = sources
        self.configuration = configuration
        self.logger = logger
        self.output = output
    }

    /// Runs a verb: opens the session, runs `body`, and turns a failure into its one line on
    /// stderr and its exit status.
    static func run(_ options: VerbOptions, _ body: (VerbSession) throws(VerbFailure) -> Void) throws {
        do {
            let session = try open(options)
            try body(session)
            session.client.close()
        } catch {
            Console.say(error.message)
            throw ExitCode(error.status)
        }
    }

    static func open(_ options: VerbOptions) throws(VerbFailure) -> VerbSession {
        let output = StandardStreams.reserveStdoutForProtocol()
        let launch = options.configuration.launchOptions
        let logger = Launcher.makeLogger(level: launch.logLevel)
        let sources: ConfigurationSources
        do { sources = try ConfigurationSources.load(launch) } catch { throw VerbFailure(message: error.message) }
        let socket = UserPaths.agentSocket()
        let connection = try EngineConnection.open(socketPath: socket, useAgent: !options.noAgent && !AgentConnection.disabledByEnvironment, logger: logger)
        let client = JSONRPCClient(fd: connection.fd)
        let opener = URLOpener.system()
        client.onRequest = { method, params in
            method == "openUrl" ? opener.handle(params) : .failure(.methodNotFound(method))
        }
        client.onNotification = { method, params in
            if method == "deviceCode", let message = params?["message"]?.stringValue { Console.say(message) }
        }
        var params = sources.overrides
        params.browser = .client
        let initialized = try call(client, connection.engine, "initialize", params.json, timeoutSeconds: 30)
        return VerbSession(client: client, connection: connection, agentSocket: socket, sources: sources,
                           configuration: initialized["configuration"] ?? [:], logger: logger, output: output)
    }

    /// Sends a request; its error becomes a ``VerbFailure`` (`account`: the username it named).
    func call(_ method: String, _ params: JSONValue = [:], account: String? = nil) throws(VerbFailure) -> JSONValue {
        try Self.call(client, connection.engine, method, params, account: account)
    }

    /// The raw outcome of a request (for callers that treat some errors as answers).
    func outcome(_ method: String, _ params: JSONValue = [:]) throws(VerbFailure) -> Result<JSONValue, RPCError> {
        do { return try client.call(method, params: params) } catch { throw .connection(error, engine: connection.engine) }
    }

    /// Writes the verb's output to stdout.
    func print(_ text: String) {
        Console.write(text.hasSuffix("\n") ? text : text + "\n", to: output)
    }

    /// Closes stdout after the verb's last output, so a reader (`$(...)`) sees its end while
    /// the verb keeps running (`managed-identity`). Nothing may be printed afterwards.
    func closeOutput() {
        _ = Glibc.close(output)
    }

    private static func call(_ client: JSONRPCClient, _ engine: EngineConnection.Engine, _ method: String, _ params: JSONValue,
                             account: String? = nil, timeoutSeconds: Double? = nil) throws(VerbFailure) -> JSONValue {
        let outcome: Result<JSONValue, RPCError>
        do { outcome = try client.call(method, params: params, timeoutSeconds: timeoutSeconds) } catch {
            throw .connection(error, engine: engine)
        }
        switch outcome {
        case .success(let result): return result
        case .failure(let error): throw .from(error, account: account)
        }
    }
}
