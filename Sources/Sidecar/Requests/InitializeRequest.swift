import JSON
import JSONRPC

/// `initialize`: the session's configuration (the keys of ``ConfigurationOverrides``, layered
/// over the startup configuration or the named `profile`), and the members editors send.
public struct InitializeRequest: RequestType {
    public typealias Response = InitializeResponse
    public static let method = SidecarMethod.initialize.rawValue
    /// The configuration keys, `profile` and the editors' members.
    public static let parameters = ConfigurationOverrides.keys.union(SidecarService.initializeExtraKeys)

    /// The configuration keys the request sets.
    public var overrides: ConfigurationOverrides
    /// The profile to layer them over (`nil`: the startup one).
    public var profile: String?

    public init(overrides: ConfigurationOverrides, profile: String? = nil) {
        self.overrides = overrides
        self.profile = profile
    }

    /// Decodes the params as the edge always has: the configuration keys first, with their own
    /// messages (an unknown key is named as a configuration key), then `profile`.
    public init(decoding params: JSONValue?) throws(RPCError) {
        overrides = try ConfigurationOverrides(params: params, alsoAllowed: SidecarService.initializeExtraKeys)
        profile = try Params(params, allowed: Self.parameters).optional("profile")
    }

    public init(_ params: Params) throws(RPCError) {
        try self.init(decoding: .object(params.members))
    }

    public var params: JSONValue {
        var object = overrides.json.objectValue ?? [:]
        if let profile { object["profile"] = .string(profile) }  // the agent layers the overrides over that profile
        return .object(object)
    }
}

/// `initialize`'s result: the configuration in force and what serves the session.
public struct InitializeResponse: ResponseType {
    /// The configuration in force (a Configuration object).
    public var configuration: JSONValue { result["configuration"] ?? [:] }
    /// What protects the file cache (`nil`: no file cache, or a door that does not report it).
    public var cacheProtection: JSONValue? { result["cacheProtection"] }
    /// The agent serving the session: its pid, start, connections, forwarding (`nil`: none).
    public var agent: JSONValue? { result["agent"] }
    public let result: JSONValue

    public init(decoding result: JSONValue) throws(RPCError) {
        guard case .object = result else { throw .malformedResult(InitializeRequest.method, member: "configuration") }
        self.result = result
    }
}
