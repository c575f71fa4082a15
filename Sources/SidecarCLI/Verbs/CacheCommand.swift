import ArgumentParser
import JSONRPC
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// `auth-sidecar cache ...`: the token cache file itself.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache", abstract: "Work with the token cache file.", subcommands: [CacheExportCommand.self])
}

/// `auth-sidecar cache export --plaintext`: the cache's JSON (MSAL's format) on stdout,
/// decrypted with the configured key store; a warning on stderr.
struct CacheExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print the token cache as MSAL's plain JSON (it holds refresh tokens: handle with care).",
        discussion: """
            For the rare user who needs the JSON (sharing the cache with MSAL for Python, say). \
            The file on disk is not changed. --plaintext is required, to say you mean it.
            """)

    @Flag(help: "Print the cache decrypted (required).")
    var plaintext = false

    @OptionGroup var configuration: ConfigurationOptions

    func validate() throws {
        guard plaintext else { throw ValidationError("--plaintext is required: the output holds your refresh tokens in the clear") }
    }

    func run() throws {
        let output = StandardStreams.reserveStdoutForProtocol()
        do {
            let sources = try ConfigurationSources.load(configuration.launchOptions)
            let json = try CacheExport.plaintext(sources.overrides)
            Console.say(
                "warning: this is your token cache in plaintext; its refresh tokens sign in as you: keep it out of shared files, logs and shell history"
            )
            guard POSIX.writeAll(output, json + [UInt8(ascii: "\n")]) else { throw ExitCode(VerbFailure.failureStatus) }
        } catch let error as RPCError {
            Console.say(error.message)
            throw ExitCode(VerbFailure.failureStatus)
        }
    }
}
