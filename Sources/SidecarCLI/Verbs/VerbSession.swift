import Agent
import ArgumentParser
import JSON
import JSONRPC
import Logging
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The options every verb takes: the configuration sources, and whether to use an agent.
struct VerbOptions: ParsableArguments {
    @OptionGroup var configuration: ConfigurationOptions

    @Flag(name: .customLong("no-agent"), help: "Do not use a running agent; run the engine in this process.")
    var noAgent = false

    /// These options as a plain value.
    var plain: VerbLaunchOptions {
        VerbLaunchOptions(launch: configuration.launchOptions, noAgent: noAgent)
    }
}

/// A verb's configured connection to the engine (an agent or in-process), and its output.
///
/// `open` reserves stdout for the verb's output (anything else that writes to fd 1 lands on
/// stderr), reads the configuration sources, connects, and sends `initialize` with them and
/// `browser: "client"`, so the verb opens the sign-in page itself (``URLOpener``) and
/// `deviceCode` messages reach the user on stderr. `initialize`'s reply is read before the
/// next request goes out, except for requests that cannot start a sign-in (`pipelined`): the
/// engine answers `initialize` before it reads another line, so they need not wait for it.
final class VerbSession {
    let client: any EngineClient
    let connection: EngineConnection
    let agentSocket: String
    let sources: ConfigurationSources
    /// Whether an agent may serve this session (not `--no-agent`).
    let useAgent: Bool
    /// Whether an in-process engine reports `cacheProtection` (``VerbLaunchOptions/cacheProtection``).
    private let reportsCacheProtection: Bool
    /// Logs to stderr at the `--log-level`.
    let logger: Logger
    /// The device code and its countdown on stderr.
    let progress = SignInProgress()
    private let output: Int32
    private var initialized: Result<InitializeResponse, VerbFailure>?
    private let initializeID: RequestID

    private init(
        client: any EngineClient, connection: EngineConnection, agentSocket: String,
        sources: ConfigurationSources, useAgent: Bool, reportsCacheProtection: Bool, initializeID: RequestID, logger: Logger,
        output: Int32
    ) {
        self.client = client
        self.connection = connection
        self.agentSocket = agentSocket
        self.sources = sources
        self.useAgent = useAgent
        self.reportsCacheProtection = reportsCacheProtection
        self.initializeID = initializeID
        self.logger = logger
        self.output = output
    }

    /// The configuration in force, as the engine reports it (`initialize`'s result).
    /// - Throws: `initialize`'s error (a configuration the engine refused).
    var configuration: JSONValue {
        get throws(VerbFailure) {
            if initialized == nil {
                initialized = Result { () throws(VerbFailure) in
                    try Self.decoded(InitializeRequest.self, try Self.outcome(client, connection.engine, initializeID, timeoutSeconds: 30))
                }
            }
            switch initialized {
            case .success(let result)?: return result.configuration
            case .failure(let failure)?: throw failure
            case nil: return [:]
            }
        }
    }

    /// `initialize`'s `cacheProtection` member (what protects the file cache; `nil`: none, or an
    /// in-process engine not asked for it: ``VerbLaunchOptions/cacheProtection``).
    var cacheProtection: JSONValue? {
        get throws(VerbFailure) {
            _ = try configuration
            if case .success(let result)? = initialized { return result.cacheProtection }
            return nil
        }
    }

    /// `initialize`'s `agent` member: the serving agent's pid, start and connections, and
    /// forwarding (`nil`: none).
    var agentInfo: JSONValue? {
        get throws(VerbFailure) {
            _ = try configuration
            if case .success(let result)? = initialized { return result.agent }
            return nil
        }
    }

    /// Runs a verb: opens the session, runs `body`, and turns a failure into its one line on
    /// stderr and its exit status.
    static func run(_ options: VerbOptions, _ body: (VerbSession) throws(VerbFailure) -> Void) throws {
        try run(options.plain, body)
    }

    /// Runs a verb with these options as plain values (`login --redirect-port`).
    static func run(_ options: VerbLaunchOptions, _ body: (VerbSession) throws(VerbFailure) -> Void) throws {
        let status = exitStatus(options, body)
        if status != 0 { throw ExitCode(status) }
    }

    /// Runs a verb as ``run(_:_:)`` does, for a caller without swift-argument-parser.
    /// - Returns: the verb's exit status.
    static func exitStatus(_ options: VerbLaunchOptions, _ body: (VerbSession) throws(VerbFailure) -> Void) -> Int32 {
        do {
            let session = try open(options)
            try body(session)
            session.client.close()
            return 0
        } catch {
            Console.say(error.message)
            return error.status
        }
    }

    static func open(_ options: VerbLaunchOptions) throws(VerbFailure) -> VerbSession {
        let output = StandardStreams.reserveStdoutForProtocol()
        let launch = options.launch
        let logger = Launcher.makeLogger(level: launch.logLevel)
        let sources: ConfigurationSources
        do { sources = try ConfigurationSources.load(launch) } catch {
            throw VerbFailure(message: ConfigurationSources.fileMistakeLine(error) ?? error.message)
        }
        return try connect(
            sources: sources, useAgent: !options.noAgent, redirectPort: options.redirectPort, cacheProtection: options.cacheProtection,
            logger: logger, output: output)
    }

    /// A new session like this one (same configuration, output and agent choice) on a new
    /// connection: a running agent, else an engine in this process. For long-lived verbs whose
    /// connection was lost (the agent restarted); the caller closes this one.
    func reconnected() throws(VerbFailure) -> VerbSession {
        client.close()
        return try Self.connect(
            sources: sources, useAgent: useAgent, cacheProtection: reportsCacheProtection, logger: logger, output: output)
    }

    /// Another session like this one (same configuration, output and agent choice) on a
    /// connection of its own, this one kept open: an ``EnginePool``'s next session.
    func sibling() throws(VerbFailure) -> VerbSession {
        try Self.connect(sources: sources, useAgent: useAgent, cacheProtection: reportsCacheProtection, logger: logger, output: output)
    }

    /// Closes the engine connection (an in-process engine's thread ends with it).
    func close() { client.close() }

    /// A session with these sources, for a verb that opens several (`profiles`): it reserves
    /// stdout and makes the logger once itself.
    static func connect(
        sources: ConfigurationSources, useAgent: Bool, redirectPort: Int? = nil, cacheProtection: Bool = false, logger: Logger,
        output: Int32
    ) throws(VerbFailure) -> VerbSession {
        let socket = UserPaths.agentSocket()
        let connection = try EngineConnection.open(
            socketPath: socket, useAgent: useAgent && !AgentConnection.disabledByEnvironment, logger: logger)
        let client = try connection.client(logger: logger, cacheProtection: cacheProtection)
        var overrides = sources.overrides
        overrides.browser = .client
        if let redirectPort { overrides.redirectPort = redirectPort }
        let initializeID: RequestID
        do { initializeID = try client.send(InitializeRequest(overrides: overrides, profile: sources.profile)) } catch {
            throw .connection(error, engine: connection.engine)
        }
        let session = VerbSession(
            client: client, connection: connection, agentSocket: socket, sources: sources, useAgent: useAgent,
            reportsCacheProtection: cacheProtection, initializeID: initializeID, logger: logger, output: output)
        session.use(nil)
        let progress = session.progress
        client.onNotification = { method, params in
            guard method == "deviceCode" else { return }
            if let code = params?["userCode"]?.stringValue, let url = params?["verificationUri"]?.stringValue {
                progress.deviceCode(userCode: code, verificationUri: url, expiresOn: params?["expiresOn"]?.intValue)
            } else if let message = params?["message"]?.stringValue {
                Console.say(message)
            }
        }
        return session
    }

    /// Answers `openUrl` with `opener` from now on (`nil`: the browser `--browser` would use,
    /// looked up only when a URL comes, so a verb that signs nobody in reads no more), and
    /// `pasteSignIn` (`login --paste`) with ``PastePrompt``.
    func use(_ opener: URLOpener?) {
        client.onRequest = { method, params in
            if method == "pasteSignIn" { return PastePrompt().handle(params) }
            guard method == "openUrl" else { return .failure(.methodNotFound(method)) }
            return (opener ?? URLOpener.system()).handle(params)
        }
    }

    /// Sends a request; its error becomes a ``VerbFailure`` (`account`: the username it named).
    /// - Parameter pipelined: send it before `initialize`'s reply is in; only for requests
    ///   that cannot start a sign-in (were `initialize` refused, the engine's own
    ///   configuration would answer them, and that answer is dropped).
    func call(_ method: String, _ params: JSONValue = [:], account: String? = nil, pipelined: Bool = false) throws(VerbFailure) -> JSONValue {
        if !pipelined { _ = try configuration }
        defer { progress.finish() }
        let id = try send(method, params)
        _ = try configuration
        return try Self.outcome(client, connection.engine, id, account: account)
    }

    /// Sends a typed request and reads its typed result; its error becomes a ``VerbFailure``
    /// (`account`: the username it named). `pipelined` as ``call(_:_:account:pipelined:)``.
    func call<Request: RequestType>(_ request: Request, account: String? = nil, pipelined: Bool = false) throws(VerbFailure) -> Request.Response {
        try Self.decoded(Request.self, try call(Request.method, request.params, account: account, pipelined: pipelined))
    }

    /// The typed outcome of a request (for callers that treat some errors as answers).
    func outcome<Request: RequestType>(_ request: Request) throws(VerbFailure) -> Result<Request.Response, RPCError> {
        switch try outcome(Request.method, request.params) {
        case .success(let result): return .success(try Self.decoded(Request.self, result))
        case .failure(let error): return .failure(error)
        }
    }

    /// `result` as `Request`'s result type; one it does not fit is the engine's fault, said in a line.
    private static func decoded<Request: RequestType>(_ type: Request.Type, _ result: JSONValue) throws(VerbFailure) -> Request.Response {
        do { return try Request.Response(decoding: result) } catch { throw VerbFailure(message: "the engine's answer: \(error.message)") }
    }

    /// The raw outcome of a request (for callers that treat some errors as answers).
    func outcome(_ method: String, _ params: JSONValue = [:]) throws(VerbFailure) -> Result<JSONValue, RPCError> {
        _ = try configuration
        defer { progress.finish() }
        let id = try send(method, params)
        do { return try client.reply(to: id, timeoutSeconds: nil) } catch { throw .connection(error, engine: connection.engine) }
    }

    private func send(_ method: String, _ params: JSONValue) throws(VerbFailure) -> RequestID {
        do { return try client.sendRequest(method, params: params) } catch { throw .connection(error, engine: connection.engine) }
    }

    /// The verb's stdout (fd 1 itself points at stderr while the session is open): what
    /// `exec` hands its child as stdout.
    var outputDescriptor: Int32 { output }

    /// Writes the verb's output to stdout.
    func print(_ text: String) {
        Console.write(text.hasSuffix("\n") ? text : text + "\n", to: output)
    }

    /// Closes stdout after the verb's last output, so a reader (`$(...)`) sees its end while
    /// the verb keeps running (`managed-identity`). Nothing may be printed afterwards.
    func closeOutput() {
        _ = Glibc.close(output)
    }

    private static func outcome(
        _ client: any EngineClient, _ engine: EngineConnection.Engine, _ id: RequestID,
        account: String? = nil, timeoutSeconds: Double? = nil
    ) throws(VerbFailure) -> JSONValue {
        let outcome: Result<JSONValue, RPCError>
        do { outcome = try client.reply(to: id, timeoutSeconds: timeoutSeconds) } catch {
            throw .connection(error, engine: engine)
        }
        switch outcome {
        case .success(let result): return result
        case .failure(let error): throw .from(error, account: account)
        }
    }
}
