import JSON
import JSONRPC

/// The agent socket's stage for every session (whoever the peer is: a local process, `ssh`,
/// `slogin`, socat, a container's process behind a bind mount; the peer's name is never
/// trusted): everything the engine offers, except settings that run a program or read or write
/// a file as the agent's user (`cache`: its path, `keyFile`, `keyCommand`; `cacheProtection`;
/// `forwardApproval`; `forwardScopes`; `clientAssertion`: a command, a file, the agent's CI
/// variables). Those come from the agent's configuration file (and command line) only:
/// `initialize` or a stdio relay's start-up line may repeat them as the agent has them for the
/// profile chosen, never choose others (fail closed). A client that needs other ones runs
/// without the agent (`--no-agent`, `AUTH_SIDECAR_NO_AGENT=1`).
public struct LocalSettingsPolicy: SessionPolicy {
    /// The agent's own configuration.
    let agent: ConfigurationOverrides
    /// The agent's profiles (a session's `profile` chooses the configuration compared with).
    let profiles: ProfileTable

    public init(agent: ConfigurationOverrides, profiles: ProfileTable = ProfileTable()) {
        self.agent = agent
        self.profiles = profiles
    }

    /// Passes when every setting that runs or reads something is absent from `given` or is
    /// the agent's own (`agent`, the configuration of the chosen profile); else -51014
    /// (`forwardConfigurationRefused`) naming it.
    public static func check(_ given: ConfigurationOverrides, agent: ConfigurationOverrides) throws(RPCError) {
        let defaults = Configuration(clientId: "")
        let differs: [(String, Bool)] = [
            ("cache", given.cache != nil && given.cache != (agent.cache ?? defaults.cache)),
            (
                "cacheProtection",
                given.cacheProtection != nil && given.cacheProtection != (agent.cacheProtection ?? defaults.cacheProtection)
            ),
            ("forwardApproval", given.forwardApproval != nil && given.forwardApproval != agent.forwardApproval),
            ("forwardScopes", given.forwardScopes != nil && given.forwardScopes != agent.forwardScopes),
            (
                "forwardProofOfPossession",
                given.forwardProofOfPossession != nil && given.forwardProofOfPossession != agent.forwardProofOfPossession
            ),
            ("clientAssertion", given.clientAssertion != nil && given.clientAssertion != agent.clientAssertion),
        ]
        if let (member, _) = differs.first(where: \.1) {
            throw ForwardPolicy.configurationRefused(
                "'\(member)' may not be set through the agent's socket (it runs or reads something as you on the agent's machine): "
                    + "set it in the agent's own configuration file there, or run without the agent "
                    + "(a verb's --no-agent, or AUTH_SIDECAR_NO_AGENT=1); "
                    + "to reach the agent from another machine, forward its forward socket (agent --forward)",
                member: member)
        }
    }

    /// ``check(_:agent:)`` against the configuration of the profile `profile` chooses.
    public func check(_ given: ConfigurationOverrides, profile: String?) throws(RPCError) {
        try Self.check(given, agent: try profiles.base(profile: profile, given: given, startup: agent))
    }

    public var seesReplies: Bool { false }
    public func asksConsent(_ method: SidecarMethod) -> Bool { false }

    public func admit(_ method: SidecarMethod, params: JSONValue?) throws(RPCError) -> JSONValue? {
        if method == .initialize {
            let given = try ConfigurationOverrides(params: params, alsoAllowed: SidecarService.initializeExtraKeys)
            let profile: String? = try Params(params, allowed: ConfigurationOverrides.keys.union(SidecarService.initializeExtraKeys))
                .optional("profile")
            try check(given, profile: profile)
        }
        return params
    }

    public func approve(_ method: SidecarMethod, params: JSONValue?) async throws(RPCError) {}
    public func channel(_ method: SidecarMethod, _ context: RequestContext) -> RequestContext { context }
    public func release(_ method: SidecarMethod, params: JSONValue?, result: JSONValue) throws(RPCError) -> ReplyDecision { .send(result) }
    public func audit(_ method: SidecarMethod, params: JSONValue?, result: JSONValue) {}
    public var releasesErrors: Bool { false }
    public func releaseError(_ method: SidecarMethod, _ error: RPCError) -> RPCError { error }
}
