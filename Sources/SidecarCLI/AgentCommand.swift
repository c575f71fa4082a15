import Agent
import ArgumentParser
import JSONRPC
import Logging
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// `auth-sidecar agent`: one resident engine for all of the user's programs, on a Unix socket.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Serve the JSON-RPC protocol on a Unix socket for all of the user's programs.",
        discussion: """
            Every connection is a JSON-RPC session as on stdin/stdout (NDJSON or LSP framing, its own \
            initialize); sessions with the same configuration share one token cache in memory and one \
            refresh per token. The stdio mode, the shell verbs and the clients use a running agent \
            (AUTH_SIDECAR_SOCK, default $XDG_RUNTIME_DIR/auth-sidecar/agent.sock); set \
            AUTH_SIDECAR_NO_AGENT=1 to keep a process standalone. SIGTERM lets requests in flight \
            finish, cancels the rest and removes the socket.

            --forward adds a second, restricted socket meant for 'ssh -R' and containers (off unless \
            asked for): it hands out access tokens for the scopes the configuration's forwardScopes \
            lists, never a refresh or ID token, refuses signout and setCurrentAccount, and signs in \
            (on this machine) only when forwardApproval's command approves. Every token it hands out \
            is a line on stderr.
            """)

    @Option(help: ArgumentHelp("The socket (default: $AUTH_SIDECAR_SOCK, else under $XDG_RUNTIME_DIR).", valueName: "path"))
    var socket: String?

    @Flag(help: "Also listen on the forward socket (forward.sock beside the agent socket), for 'ssh -R' and containers.")
    var forward = false

    @Option(
        name: .customLong("forward-socket"),
        help: ArgumentHelp("The forward socket (implies --forward; default: forward.sock beside the agent socket).", valueName: "path"))
    var forwardSocket: String?

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp("Exit after this many seconds without a connection (default: never).", valueName: "seconds"))
    var idleTimeout: Int?

    @Option(
        name: .customLong("max-connections"),
        help: ArgumentHelp(
            "The most connections served at once, fewer under a lower descriptor limit; past it a waiting or idle one is closed, else the new one refused (default: 512).",
            valueName: "n"))
    var maxConnections: Int?

    @Option(name: .customLong("client-id"), help: "The application (client) ID every session starts with.")
    var clientID: String?

    @Option(help: "The authority URL every session starts with.")
    var authority: String?

    @Option(help: ArgumentHelp("A JSON file with configuration keys (default: the user's config file).", valueName: "file"))
    var config: String?

    @Option(
        help: ArgumentHelp(
            "The profile a session that names none starts with (default $AUTH_SIDECAR_PROFILE, else the file's defaultProfile); every profile is served.",
            valueName: "name"))
    var profile: String?

    @Option(help: ArgumentHelp("The token cache file, or 'memory'.", valueName: "path"))
    var cache: String?

    @Option(
        name: .customLong("cache-protection"),
        help: ArgumentHelp(
            "What keeps the cache's key: auto (default), keyring, keyFile, keyCommand, secretService or plaintext.", valueName: "layer"))
    var cacheProtection: String?

    @Option(help: ArgumentHelp("Sign in through the Linux identity broker: off (default), auto or required.", valueName: "mode"))
    var broker: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .notice

    func validate() throws {
        if let idleTimeout, idleTimeout < 1 { throw ValidationError("--idle-timeout must be at least 1 second") }
        if let forwardSocket, forwardSocket == (socket ?? UserPaths.agentSocket()) {
            throw ValidationError("--forward-socket must differ from the agent socket")
        }
        if let maxConnections, !(1...4096).contains(maxConnections) {
            throw ValidationError("--max-connections must be between 1 and 4096")
        }
    }

    func run() throws {
        var launch = LaunchOptions(clientID: clientID, authority: authority, config: config, cache: cache, logLevel: logLevel)
        launch.cacheProtection = cacheProtection
        launch.broker = broker
        launch.profile = profile
        launch.agentSocket = socket
        launch.agentIdleTimeout = idleTimeout
        launch.agentMaxConnections = maxConnections
        if forward || forwardSocket != nil {
            launch.agentForwardSocket = forwardSocket ?? UserPaths.forwardSocket(beside: socket ?? UserPaths.agentSocket())
        }
        do {
            try Launcher.runAgent(launch)
        } catch let error as RPCError {
            throw ValidationError(error.message)
        } catch {
            // Cannot start (another agent, an unsafe path): one line, exit status 1.
            let line = "auth-sidecar agent: \(error)\n"
            _ = line.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
            throw ExitCode.failure
        }
    }
}
