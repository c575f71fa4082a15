import JSON
import JSONRPC
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The configuration the command line chooses, and where it came from: the `--config`
/// file, else the default file (`UserPaths.defaultConfigFile()`) when it exists, overlaid
/// with `--client-id`, `--authority`, `--cache` and the time limits. The stdio mode and the
/// verbs both read it here.
struct ConfigurationSources: Equatable {
    /// The layered keys (file below flags).
    var overrides = ConfigurationOverrides()
    /// Where the keys came from, lowest precedence first: `file PATH`, then the flags used.
    var origins: [String] = []

    /// - Throws: -32602 when the file cannot be read or is not a valid configuration object.
    static func load(
        _ options: LaunchOptions,
        environment: (String) -> String? = ProcessEnvironment.value
    ) throws(RPCError) -> ConfigurationSources {
        var sources = ConfigurationSources()
        if let path = options.config ?? UserPaths.defaultConfigFile(environment).flatMap(existingFile) {
            sources.overrides = try readFile(path, flag: options.config == nil ? "the default configuration file" : "--config file")
            sources.origins.append("file \(path)")
        }
        var fromFlags = ConfigurationOverrides()
        fromFlags.clientId = options.clientID
        fromFlags.authority = options.authority
        fromFlags.httpTimeoutSeconds = options.httpTimeoutSeconds
        fromFlags.interactiveTimeoutSeconds = options.interactiveTimeoutSeconds
        if let cache = options.cache { fromFlags.cache = cache == "memory" ? .memory : .file(path: cache) }
        if let protection = options.cacheProtection {
            // Read as the key is everywhere: one list of names, one error.
            fromFlags.cacheProtection = try ConfigurationOverrides(params: ["cacheProtection": .string(protection)]).cacheProtection
        }
        sources.overrides = fromFlags.merged(over: sources.overrides)
        let flags: [(String, Bool)] = [
            ("--client-id", options.clientID != nil), ("--authority", options.authority != nil),
            ("--cache", options.cache != nil), ("--cache-protection", options.cacheProtection != nil),
            ("--http-timeout-seconds", options.httpTimeoutSeconds != nil),
            ("--interactive-timeout-seconds", options.interactiveTimeoutSeconds != nil),
        ]
        sources.origins += flags.filter(\.1).map(\.0)
        return sources
    }

    private static func existingFile(_ path: String) -> String? {
        access(path, F_OK) == 0 ? path : nil
    }

    private static func readFile(_ path: String, flag: String) throws(RPCError) -> ConfigurationOverrides {
        guard let text = ProcessEnvironment.readTextFile(path) else {
            throw .invalidParams("cannot read \(flag) \(path)")
        }
        let value: JSONValue
        do { value = try JSONValue.parse(text) } catch {
            throw .invalidParams("\(flag) \(path) is not valid JSON: \(error)")
        }
        return try ConfigurationOverrides(params: value)
    }
}
