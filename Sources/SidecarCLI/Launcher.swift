import Agent
import ArgumentParser
import AzEmulator
import Composition
import JSON
import JSONRPC
import Logging
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Starts the sidecar: reserves stdout, sets up logging, builds the service from the
/// options and serves JSON-RPC on stdin/stdout until end of input, then exits.
public enum Launcher {
    /// The process entry point: plain option lines and plain `token` lines through
    /// ``PlainCommandLine``, every other line through swift-argument-parser.
    public static func main(arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        JSONHashSeed.plant()
        refuseTooFewDescriptors()
        if let azArguments = AzShim.arguments(programName: CommandLine.arguments.first, arguments) {
            Glibc.exit(AzShim.run(azArguments, host: VerbAzHost()))  // started as az: the az emulator
        }
        if let started = MultiCallNames.match(programName: CommandLine.arguments.first, arguments) {
            Glibc.exit(started.entry.run(started.arguments))  // keyring, docker-credential-auth-sidecar
        }
        if arguments.first == AgentCommand.configuration.commandName {
            // A subcommand parses its own options as a root command: the root's options of the
            // same names would otherwise take them.
            AgentCommand.main(Array(arguments.dropFirst()))
            Glibc.exit(0)
        }
        switch PlainCommandLine.parse(arguments) {
        case .token(let request, let options)?:
            Glibc.exit(VerbSession.exitStatus(options) { session throws(VerbFailure) in try request.run(session) })
        case .sshCert(let request, let options)?:
            Glibc.exit(VerbSession.exitStatus(options) { session throws(VerbFailure) in try request.runAndPrint(session) })
        case .stdio(let options)?:
            do {
                try run(options)
            } catch {
                exitRefusingToStart(error)
            }
        case nil:
            AuthSidecarCommand.main(arguments)
            Glibc.exit(0)
        }
    }

    /// The fewest descriptors a process of this program runs with: the standard streams and
    /// the protocol's, the cache and its lock, libcurl's socket and certificates, the
    /// concurrency runtime's event loop (libdispatch traps, SIGILL, when it cannot open it).
    static let minimumDescriptors = 24

    /// Below ``minimumDescriptors`` (`ulimit -n`), raises the soft limit to the hard one; when
    /// that is still too few, exits with one line saying so (status 1) rather than dying of a
    /// signal halfway.
    static func refuseTooFewDescriptors() {
        guard DescriptorLimit.current < minimumDescriptors, DescriptorLimit.raiseToHard() < minimumDescriptors else { return }
        Console.say(
            "too few file descriptors: the limit is \(DescriptorLimit.current) (ulimit -n), at least \(minimumDescriptors) are needed")
        Glibc.exit(VerbFailure.failureStatus)
    }

    /// Serves until end of input; returns only by throwing a configuration error. With an
    /// agent of the user's running, forwards to it instead (``AgentRelay``).
    /// A configuration refused at start: a usage error (64, with the usage); a cache no key
    /// store can protect, or a mistake inside the configuration file, is not one: its message
    /// (a line per layer; the file and the key) and status 1.
    static func exitRefusingToStart(_ error: RPCError) -> Never {
        if error.code == AuthErrorMapping.code(for: .cacheUnavailable) {
            Console.say(error.message)
            Glibc.exit(VerbFailure.failureStatus)
        }
        // A mistake inside the configuration file is not a usage error: its one line (the
        // file, the key, the key it meant), status 1 as README's exit table says.
        if let line = ConfigurationSources.fileMistakeLine(error) {
            Console.say(line)
            Glibc.exit(VerbFailure.failureStatus)
        }
        AuthSidecarCommand.exit(withError: ValidationError(error.message))
    }

    static func run(_ options: LaunchOptions) throws(RPCError) -> Never {
        forbidCoreDumps()
        TerminalHint.showIfStdinIsATerminal()
        let protocolOutput = StandardStreams.reserveStdoutForProtocol()
        let sources = try ConfigurationSources.load(options, requireProfile: false)
        if let agent = agentToForwardTo(options) {
            let preamble =
                sources.overrides == ConfigurationOverrides() && sources.profile == nil
                ? nil : StartupPreamble.line(sources.overrides.json, profile: sources.profile)
            Glibc.exit(AgentRelay.run(socket: agent, input: STDIN_FILENO, output: protocolOutput, preamble: preamble))
        }
        let logger = makeLogger(level: options.logLevel)
        LongRunningProcess.begin()
        // The stdio mode serves the user's own process.
        var serviceOptions = SidecarService.Options(policy: OpenSessionPolicy(), dependencies: ApplicationFactory.live)
        serviceOptions.diagnostics = options.enableDiagnostics
        serviceOptions.maxMessageSize = options.maxMessageSize
        serviceOptions.startup = sources.overrides
        serviceOptions.startupProfile = sources.profile
        serviceOptions.profiles = sources.profiles
        serviceOptions.profiles.reread = ConfigurationSources.rereadingProfiles(options)
        let service = try SidecarService(options: serviceOptions, logger: logger)
        let server = JSONRPCServer(
            service: service, options: .init(maxMessageSize: options.maxMessageSize), logger: logger)
        TerminationSignals.block()
        let status = server.run(input: STDIN_FILENO, output: protocolOutput) {
            TerminationSignals.wait {
                logger.info("signal received; cancelling requests in flight")
                server.cancelAllAndStop()
                Glibc.exit(0)
            }
        }
        Glibc.exit(status)
    }

    /// A connection to the user's agent, unless this process must stay standalone
    /// (`AUTH_SIDECAR_NO_AGENT`, or diagnostics, which only a standalone server offers). A
    /// socket that is not the user's own is never used: one line on stderr says so, and the
    /// process serves standalone (the rule of every client and mode, README "The agent").
    static func agentToForwardTo(_ options: LaunchOptions) -> Int32? {
        guard !options.enableDiagnostics, !AgentConnection.disabledByEnvironment else { return nil }
        let path = UserPaths.agentSocket()
        switch AgentConnection.probe(path) {
        case .connected(let fd): return fd
        case .refused(let reason):
            Console.say(AgentConnection.ignoredSocketLine(path, reason))
            return nil
        case .absent: return nil
        }
    }

    /// Runs the agent until SIGTERM/SIGINT or its idle timeout.
    static func runAgent(_ options: LaunchOptions) throws -> Never {
        forbidCoreDumps()
        _ = StandardStreams.reserveStdoutForProtocol()  // nothing is written to stdout
        DescriptorLimit.raiseToHard()  // the connection cap follows it
        let logger = makeLogger(level: options.logLevel)
        LongRunningProcess.begin()
        var agentOptions = AgentServer.Options(socketPath: options.agentSocket ?? UserPaths.agentSocket())
        agentOptions.idleTimeout = options.agentIdleTimeout.map { .seconds($0) }
        if let cap = options.agentMaxConnections { agentOptions.maxConnections = cap }
        agentOptions.forwardSocketPath = options.agentForwardSocket
        let sources = try ConfigurationSources.load(options, requireProfile: false)
        agentOptions.startup = sources.overrides
        agentOptions.startupProfile = sources.profile
        agentOptions.profiles = sources.profiles
        agentOptions.profiles.reread = ConfigurationSources.rereadingProfiles(options)
        if agentOptions.startup.clientId != nil { _ = try agentOptions.startup.resolved() }  // refuse a bad configuration at once
        let server = AgentServer(options: agentOptions, logger: logger)
        TerminationSignals.onTerminate {
            logger.notice("signal received; finishing requests in flight")
            server.stop()
        }
        if agentOptions.startup.clientId != nil {  // after the signals are blocked: its thread inherits the mask
            try SSHCertificateKeeper(
                engine: { () throws(RPCError) in try server.ownEngine() }, keys: agentOptions.startup.sshCertificates ?? [],
                sshAgent: agentOptions.startup.sshAgent ?? false, logger: logger
            ).start()
        }
        try server.run()
        Glibc.exit(0)
    }

    /// The agent and the stdio mode hold the cache key and decrypted tokens for long: no core
    /// file, no same-uid debugger (``POSIX/forbidCoreDumps()``). The kernel does not refuse
    /// either call; if it ever did, the process would still serve (a warning would need the
    /// logger, made later).
    private static func forbidCoreDumps() {
        try? POSIX.forbidCoreDumps()
    }

    /// Logging to stderr (redacted) at `level`; call once per process.
    static func makeLogger(level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in StderrLogHandler(label: label, level: level) }
        return Logger(label: "auth-sidecar")
    }
}
