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

/// The command line: with no verb, options then the JSON-RPC server on stdin/stdout until
/// end of input; with a verb (`token`, `login`, ...), that one action for a shell.
public struct AuthSidecarCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "auth-sidecar",
        abstract: "Sign-in, token cache and Microsoft Graph for any language, as JSON-RPC 2.0 over stdin/stdout.",
        discussion: """
            Without a verb: send newline-delimited JSON-RPC or LSP-framed (Content-Length) messages \
            on stdin; replies come on stdout in the same framing. Logs go to stderr. With a verb: \
            one action for shells (exit status 0 success, 1 failure, 2 sign-in needed, 64 usage \
            error).

            Started as 'az' (the az in the directory 'auth-sidecar where az' prints, which every package has: \
            /usr/share/auth-sidecar/az-shim/bin from the .deb, PREFIX/share/auth-sidecar/az-shim/bin from the others) or as \
            'auth-sidecar az ...', it answers 'az account get-access-token' and 'az account show' as Azure CLI \
            prints them, for tools that call az (azure-identity's AzureCliCredential, Terraform); other az \
            commands are refused (exit 2) or, with the azPassthrough key, run by the real az further down PATH.

            More: README.md, docs/ and protocol/README.md (every method, its params, results and errors) in \
            the directory 'auth-sidecar where docs' prints, which every package has: /usr/share/doc/auth-sidecar \
            from the .deb, PREFIX/share/doc/auth-sidecar from the tarball and the wheel (PREFIX: its venv), \
            node_modules/auth-sidecar/share/doc/auth-sidecar from npm; man auth-sidecar with the .deb and the \
            tarball. The editor plugins: 'auth-sidecar where neovim', 'auth-sidecar where emacs'.
            """,
        version: VersionText.line,
        // The shell verbs, in the order `--help` lists them, then the agent.
        subcommands: [
            TokenCommand.self, LoginCommand.self, LogoutCommand.self, AccountsCommand.self,
            ProfilesCommand.self, StatusCommand.self,
            CacheCommand.self,
            GitCredentialCommand.self, KubectlCredentialCommand.self, ManagedIdentityCommand.self, AzdAuthServerCommand.self,
            DockerConfigCommand.self, ExecCommand.self,
            SSHCertCommand.self, SSHConfigCommand.self,
            WhereCommand.self,
            AgentCommand.self,
        ])

    @OptionGroup var configurationOptions: ConfigurationOptions

    @Option(name: .customLong("max-message-size"), help: "The largest message accepted, in bytes.")
    var maxMessageSize: Int = 4 << 20

    @Flag(name: .customLong("enable-diagnostics"), help: .hidden)
    var enableDiagnostics = false

    public init() {}

    public func validate() throws {
        guard maxMessageSize >= 64 else { throw ValidationError("--max-message-size must be at least 64") }
    }

    /// The options as a plain value, for ``Launcher``.
    public var launchOptions: LaunchOptions {
        var options = configurationOptions.launchOptions
        options.maxMessageSize = maxMessageSize
        options.enableDiagnostics = enableDiagnostics
        return options
    }

    public func run() throws {
        do {
            try Launcher.run(launchOptions)
        } catch {
            Launcher.exitRefusingToStart(error)
        }
    }
}
