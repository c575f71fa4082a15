import JSON
import JSONRPC

/// The agent socket's stage for a client that is not a local process of the user (an `ssh`
/// process: someone forwarded the agent socket itself): everything the engine offers, except
/// settings that run a program or read or write a file of the client's choosing as the agent
/// (`cache`: its path, `keyFile`, `keyCommand`; `cacheProtection`; `forwardApproval`;
/// `forwardScopes`; `clientAssertion`: a command, a file, the agent's CI variables), which it may only repeat as the agent has them. A local process of the
/// user could run those programs itself; a remote end of a forwarded socket could not.
public struct LocalSettingsPolicy: SessionPolicy {
    /// The agent's own configuration.
    let agent: ConfigurationOverrides

    public init(agent: ConfigurationOverrides) { self.agent = agent }

    /// `given` when every setting that runs or reads something is absent or the agent's own;
    /// else -51014 (`forwardConfigurationRefused`) naming it.
    public static func check(_ given: ConfigurationOverrides, agent: ConfigurationOverrides) throws(RPCError) {
        let differs: [(String, Bool)] = [
            ("cache", given.cache != nil && given.cache != agent.cache),
            ("cacheProtection", given.cacheProtection != nil && given.cacheProtection != agent.cacheProtection),
            ("forwardApproval", given.forwardApproval != nil && given.forwardApproval != agent.forwardApproval),
            ("forwardScopes", given.forwardScopes != nil && given.forwardScopes != agent.forwardScopes),
            ("clientAssertion", given.clientAssertion != nil && given.clientAssertion != agent.clientAssertion),
        ]
        if let (member, _) = differs.first(where: \.1) {
            throw ForwardPolicy.configurationRefused(
                "'\(member)' may not be set through a forwarded agent socket (it runs or reads something on the agent's machine); "
                    + "set it in the agent's own configuration there, or forward the forward socket (agent --forward)",
                member: member)
        }
    }

    public var seesReplies: Bool { false }
    public func asksConsent(_ method: SidecarMethod) -> Bool { false }

    public func admit(_ method: SidecarMethod, params: JSONValue?) throws(RPCError) -> JSONValue? {
        if method == .initialize {
            try Self.check(ConfigurationOverrides(params: params, alsoAllowed: SidecarService.initializeExtraKeys), agent: agent)
        }
        return params
    }

    public func approve(_ method: SidecarMethod, params: JSONValue?) async throws(RPCError) {}
    public func channel(_ method: SidecarMethod, _ context: RequestContext) -> RequestContext { context }
    public func release(_ method: SidecarMethod, params: JSONValue?, result: JSONValue) throws(RPCError) -> ReplyDecision { .send(result) }
    public func audit(_ method: SidecarMethod, params: JSONValue?, result: JSONValue) {}
}
