import JSON
import JSONRPC
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The configuration the command line chooses, and where it came from: the `--config`
/// file, else the default file (`UserPaths.defaultConfigFile()`) when it exists, its profile
/// (`--profile`, else `$AUTH_SIDECAR_PROFILE`, else the file's default; ``ConfigurationFile``),
/// or, with no file, the CI variables of ``FederationEnvironment``,
/// overlaid with `--client-id`, `--authority`, `--cache` and the time limits. The stdio mode
/// and the verbs both read it here.
struct ConfigurationSources: Equatable {
    /// The layered keys (file below flags).
    var overrides = ConfigurationOverrides()
    /// Where the keys came from, lowest precedence first: `file PATH`, `profile NAME`, then the flags used.
    var origins: [String] = []
    /// The named profile chosen (`nil`: a flat file, no file, or several profiles and none chosen).
    var profile: String?
    /// Every profile of the file, each with the flags over it (what an engine serves).
    var profiles = ProfileTable()

    /// - Parameter requireProfile: refuse a file with several profiles, none chosen and no
    ///   default (the verbs); the stdio mode and the agent then start with the flags alone.
    /// - Throws: -32602 when the file cannot be read or is not a valid configuration object,
    ///   or the profile is unknown.
    static func load(
        _ options: LaunchOptions, requireProfile: Bool = true,
        environment: (String) -> String? = ProcessEnvironment.value
    ) throws(RPCError) -> ConfigurationSources {
        var sources = ConfigurationSources()
        let named = options.profile ?? environment(ConfigurationFile.environmentVariable).flatMap { $0.isEmpty ? nil : $0 }
        var base = ConfigurationOverrides()
        if let path = options.config ?? UserPaths.defaultConfigFile(environment).flatMap(existingFile) {
            let file = try readFile(path, flag: options.config == nil ? "the default configuration file" : "--config file")
            sources.origins.append("file \(path)")
            sources.profiles.file = file
            for name in file.profileNames { sources.profiles.bases[name] = try file.overrides(ofProfile: name) }
            if let name = named ?? file.defaultProfileName {
                guard let keys = sources.profiles.bases[name] else { throw file.unknownProfile(name) }
                base = keys
                sources.profile = file.hasProfiles ? name : nil
                if file.hasProfiles { sources.origins.append("profile \(name)") }
            } else if requireProfile {
                throw file.noDefaultProfile
            } else {
                base = file.shared
            }
        } else if let named {
            let path = options.config ?? UserPaths.defaultConfigFileForMessages(environment)
            throw .invalidParams("profile '\(named)': there is no configuration file \(path) to read it from", member: "profile")
        } else if let federated = FederationEnvironment.overrides(environment) {
            base = federated
            sources.origins.append("environment (AZURE_CLIENT_ID, AZURE_TENANT_ID, a client assertion source)")
        }
        let fromFlags = try flagOverrides(options)
        sources.overrides = fromFlags.merged(over: base)
        sources.profiles.flags = fromFlags
        sources.profiles.bases = sources.profiles.bases.mapValues { fromFlags.merged(over: $0) }
        sources.origins += flagsGiven(options)
        return sources
    }

    /// The configuration flags `options` sets, in `origins`' order. Plain tests, no array of
    /// (name, given) pairs: that tuple type, and an array class for it, were made at run time
    /// on every start (about 7 µs of a fresh process's cached token).
    private static func flagsGiven(_ options: LaunchOptions) -> [String] {
        var names: [String] = []
        if options.clientID != nil { names.append("--client-id") }
        if options.authority != nil { names.append("--authority") }
        if options.cache != nil { names.append("--cache") }
        if options.cacheProtection != nil { names.append("--cache-protection") }
        if options.broker != nil { names.append("--broker") }
        if options.httpTimeoutSeconds != nil { names.append("--http-timeout-seconds") }
        if options.interactiveTimeoutSeconds != nil { names.append("--interactive-timeout-seconds") }
        return names
    }

    /// The same sources with profile `name` chosen instead (for `profiles`, which visits each).
    func selecting(_ name: String) throws(RPCError) -> ConfigurationSources {
        var other = self
        guard let keys = profiles.bases[name] else {
            throw profiles.file?.unknownProfile(name) ?? .invalidParams("unknown profile '\(name)'", member: "profile")
        }
        other.overrides = keys
        other.profile = profiles.file?.hasProfiles == true ? name : nil
        other.origins = origins.map { $0.hasPrefix("profile ") ? "profile \(name)" : $0 }
        return other
    }

    /// What ``ProfileTable/reread`` calls for an engine started with `options`: the file's
    /// profiles as they are now, each with the same flags over it (`nil` when the file cannot
    /// be read or is not valid now). The profile the engine started with is not chosen again:
    /// it may be the one that was removed.
    static func rereadingProfiles(_ options: LaunchOptions) -> @Sendable () -> ProfileTable? {
        var unchosen = options
        unchosen.profile = nil
        return { [unchosen] in try? load(unchosen, requireProfile: false, environment: environmentIgnoringProfile).profiles }
    }

    /// The default configuration file's profile names, for shell completion (none when it
    /// cannot be read).
    static func profileNames() -> [String] {
        (try? load(LaunchOptions(), requireProfile: false, environment: environmentIgnoringProfile))?.profiles.file?.profileNames ?? []
    }

    /// The environment without `$AUTH_SIDECAR_PROFILE`: listing and choosing profiles works
    /// whatever profile this shell has chosen (even one since removed from the file).
    static func environmentIgnoringProfile(_ name: String) -> String? {
        name == ConfigurationFile.environmentVariable ? nil : ProcessEnvironment.value(name)
    }

    private static func flagOverrides(_ options: LaunchOptions) throws(RPCError) -> ConfigurationOverrides {
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
        if let broker = options.broker { fromFlags.broker = try ConfigurationOverrides(params: ["broker": .string(broker)]).broker }
        return fromFlags
    }

    private static func existingFile(_ path: String) -> String? {
        access(path, F_OK) == 0 ? path : nil
    }

    private static func readFile(_ path: String, flag: String) throws(RPCError) -> ConfigurationFile {
        let text: String
        do throws(FileRefusal) {
            // The own-file rule (a FIFO or another user's file refused at once); a link is
            // followed (dotfiles managers keep this file as one), its target checked.
            guard let bytes = try POSIX.readOwnFile(path, limit: 1 << 20, followingLink: true) else {
                throw FileRefusal(path, "does not exist")
            }
            text = String(decoding: bytes, as: UTF8.self)
        } catch {
            throw Self.markedAsFile(.invalidParams("cannot read \(flag) \(error)"), path)
        }
        let value: JSONValue
        do { value = try JSONValue.parse(text) } catch {
            throw Self.markedAsFile(.invalidParams("\(flag) \(path) is not valid JSON: \(error)"), path)
        }
        do { return try ConfigurationFile(json: value, path: path) } catch {
            throw Self.inFile(path, error)
        }
    }

    /// A configuration file's own mistake (an unknown or mistyped key, a bad value): the
    /// message names the file first and says "key", as the file's reader thinks of it, and
    /// `data.file` marks it so the stdio mode exits with that one line (status 1), not usage.
    static func inFile(_ path: String, _ error: RPCError) -> RPCError {
        // (The user's line for it: ``fileMistakeLine(_:)``.)
        let prefix = "Invalid params: "
        let detail = (error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message)
            .replacing("unknown member ", with: "unknown key ", maxReplacements: 1)
        return markedAsFile(.invalidParams("\(path): \(detail)", member: error.data["member"]?.stringValue), path)
    }

    /// `error` with `data.file`: the configuration file at `path` is what is wrong.
    private static func markedAsFile(_ error: RPCError, _ path: String) -> RPCError {
        var marked = error
        marked.data["file"] = .string(path)
        return marked
    }

    /// The one line for a mistake inside the configuration file (``inFile(_:_:)``), `nil` for
    /// any other error: "configuration error: FILE: unknown key 'clientid' (did you mean …)".
    static func fileMistakeLine(_ error: RPCError) -> String? {
        guard error.data["file"] != nil else { return nil }
        let prefix = "Invalid params: "
        return "configuration error: " + (error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message)
    }
}
