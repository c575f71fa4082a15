import JSONRPC

/// The profiles an engine serves besides its default configuration: `initialize`'s `profile`
/// (and the agent's startup preamble) choose one of them as the base its keys are layered over.
/// An agent serves every profile at once, one engine per resulting configuration.
public struct ProfileTable: Sendable, Equatable {
    /// The configuration file's profiles, each with the command line's keys over it.
    public var bases: [String: ConfigurationOverrides] = [:]
    /// The command line's keys alone.
    public var flags = ConfigurationOverrides()
    /// The file (for messages); `nil`: the engine read no file.
    public var file: ConfigurationFile?
    /// Reads the configuration file again, as the engine read it at start (the agent and the
    /// stdio mode set it): a profile added to the file later is found without a restart.
    /// Called only for a profile this table does not know; `nil`: never.
    public var reread: (@Sendable () -> ProfileTable?)?

    public init() {}

    public static func == (lhs: ProfileTable, rhs: ProfileTable) -> Bool {
        lhs.bases == rhs.bases && lhs.flags == rhs.flags && lhs.file == rhs.file
    }

    /// What the keys `given` with `profile` are layered over: the profile's keys, or `startup`
    /// (the engine's own configuration) when no profile is named.
    ///
    /// A profile this engine does not know is refused (-32602 listing the known ones), unless
    /// `given` is a configuration of its own (it names the client): a verb or a stdio process
    /// sends its profile's keys, read from its own file, which may be newer than the agent's;
    /// they are then layered over the command line's keys only, never over another profile's.
    /// Before refusing, the file is read again (``reread``): a profile added since the engine
    /// started is served (the table itself is not changed: each such session reads the file).
    public func base(profile: String?, given: ConfigurationOverrides, startup: ConfigurationOverrides) throws(RPCError)
        -> ConfigurationOverrides
    {
        guard let profile else { return startup }
        if let known = bases[profile] { return known }
        if given.clientId != nil { return flags }
        let current = reread?()
        if let added = current?.bases[profile] { return added }
        if let file = current?.file ?? file { throw file.unknownProfile(profile) }
        throw .invalidParams("unknown profile '\(profile)': this engine read no configuration file with profiles", member: "profile")
    }
}
