import ArgumentParser
import Logging

/// The options that choose the configuration and logging, shared by the stdio mode (the root
/// command) and every verb, so each is declared once.
public struct ConfigurationOptions: ParsableArguments {
    @Option(name: .customLong("client-id"), help: "The application (client) ID (a GUID for Microsoft authorities).")
    var clientID: String?

    @Option(help: "The authority URL (default https://login.microsoftonline.com/common).")
    var authority: String?

    @Option(
        help: ArgumentHelp(
            "A JSON file with configuration keys (clientId, authority, ...); default $AUTH_SIDECAR_CONFIG, else $XDG_CONFIG_HOME/auth-sidecar/config.json, when it exists.",
            valueName: "file"))
    var config: String?

    @Option(
        help: ArgumentHelp(
            "A named profile of the configuration file (its \"profiles\"); default $AUTH_SIDECAR_PROFILE, else the file's defaultProfile.",
            valueName: "name"),
        completion: .custom { _, _, _ in ConfigurationSources.profileNames() })
    var profile: String?

    @Option(help: ArgumentHelp("The token cache file, or 'memory' for no persistence.", valueName: "path"))
    var cache: String?

    @Option(
        name: .customLong("cache-protection"),
        help: ArgumentHelp(
            "What keeps the cache's key: auto (default), secretService, keyring, keyFile, keyCommand, or plaintext (no encryption).",
            valueName: "layer"))
    var cacheProtection: String?

    @Option(
        help: ArgumentHelp(
            "Sign in through the Linux identity broker (microsoft-identity-broker on the session D-Bus): off (default), auto (when it runs) or required.",
            valueName: "mode"))
    var broker: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .warning

    @Option(
        name: .customLong("http-timeout-seconds"),
        help: ArgumentHelp("The time limit of each HTTP request (1-300, default 30).", valueName: "seconds"))
    var httpTimeoutSeconds: Int?

    @Option(
        name: .customLong("interactive-timeout-seconds"),
        help: ArgumentHelp("How long a browser sign-in may take (1-3600, default 600).", valueName: "seconds"))
    var interactiveTimeoutSeconds: Int?

    public init() {}

    /// These options as a plain value (the stdio-only members at their defaults).
    public var launchOptions: LaunchOptions {
        var options = LaunchOptions(
            clientID: clientID, authority: authority, config: config, cache: cache, logLevel: logLevel,
            httpTimeoutSeconds: httpTimeoutSeconds, interactiveTimeoutSeconds: interactiveTimeoutSeconds)
        options.cacheProtection = cacheProtection
        options.broker = broker
        options.profile = profile
        return options
    }
}

// swift-format-ignore: AvoidRetroactiveConformances
// --log-level takes swift-log's own levels; neither package can declare this conformance.
extension Logger.Level: @retroactive ExpressibleByArgument {}
