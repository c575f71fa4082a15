import Logging

/// The command-line options as a plain value.
///
/// Two parsers produce it: ``AuthSidecarCommand`` (swift-argument-parser: help, version,
/// every error message) and ``PlainCommandLine``, the one fast path for plain
/// `--option value` lines (see there why it exists), which a test checks against it.
public struct LaunchOptions: Sendable, Equatable {
    public var clientID: String?
    public var authority: String?
    public var config: String?
    /// `--profile`: a named profile of the configuration file (else `$AUTH_SIDECAR_PROFILE`, else its default).
    public var profile: String?
    public var cache: String?
    /// The `cacheProtection` configuration key (validated with the configuration).
    public var cacheProtection: String?
    /// `--broker`: the `broker` configuration key (validated with the configuration).
    public var broker: String?
    public var logLevel: Logger.Level = .warning
    public var maxMessageSize: Int = 4 << 20
    public var enableDiagnostics = false
    /// The `httpTimeoutSeconds` configuration key (validated with the configuration).
    public var httpTimeoutSeconds: Int?
    /// The `interactiveTimeoutSeconds` configuration key (validated with the configuration).
    public var interactiveTimeoutSeconds: Int?
    /// `agent --socket`.
    public var agentSocket: String?
    /// `agent --idle-timeout`, in seconds.
    public var agentIdleTimeout: Int?
    /// `agent --max-connections`.
    public var agentMaxConnections: Int?
    /// `agent --forward` / `--forward-socket`: the forward socket's path (`nil`: none).
    public var agentForwardSocket: String?

    public init(
        clientID: String? = nil, authority: String? = nil, config: String? = nil, cache: String? = nil,
        logLevel: Logger.Level = .warning, maxMessageSize: Int = 4 << 20, enableDiagnostics: Bool = false,
        httpTimeoutSeconds: Int? = nil, interactiveTimeoutSeconds: Int? = nil
    ) {
        self.clientID = clientID
        self.authority = authority
        self.config = config
        self.cache = cache
        self.logLevel = logLevel
        self.maxMessageSize = maxMessageSize
        self.enableDiagnostics = enableDiagnostics
        self.httpTimeoutSeconds = httpTimeoutSeconds
        self.interactiveTimeoutSeconds = interactiveTimeoutSeconds
    }

    /// Sets one of ``ConfigurationOptions`` (the options the stdio mode and every verb share)
    /// from a plain `--name value`, for ``PlainCommandLine``.
    /// - Returns: `true` when set; `false` for an invalid value; `nil` when `name` is not one of them.
    mutating func setConfigurationOption(_ name: String, _ value: String) -> Bool? {
        switch name {
        case "--client-id": clientID = value
        case "--authority": authority = value
        case "--config": config = value
        case "--profile": profile = value
        case "--cache": cache = value
        case "--cache-protection": cacheProtection = value
        case "--broker": broker = value
        case "--log-level":
            guard let level = Logger.Level(rawValue: value) else { return false }
            logLevel = level
        case "--http-timeout-seconds":
            guard let seconds = Int(value) else { return false }
            httpTimeoutSeconds = seconds
        case "--interactive-timeout-seconds":
            guard let seconds = Int(value) else { return false }
            interactiveTimeoutSeconds = seconds
        default:
            return nil
        }
        return true
    }

    /// `--name=value` into its parts; `--name` alone has no inline value.
    static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
