import AuthCore
import AuthSeams
import JSON
import JSONRPC
import TokenCache

/// Some of the configuration keys, as one source (a file, the command line, `initialize`)
/// gives them; sources are layered with ``merged(over:)``.
public struct ConfigurationOverrides: Sendable, Equatable {
    public var clientId: String?
    public var authority: String?
    public var redirectUri: String?
    /// Fixes the loopback redirect's port (replaces `redirectUri`'s), so a forwarded port
    /// (`ssh -L`, an editor's port forwarding) can carry the redirect.
    public var redirectPort: Int?
    public var knownAuthorities: [String]?
    public var scopes: [String]?
    public var graphEndpoint: String?
    public var cache: Configuration.CacheSetting?
    public var cacheProtection: CacheProtection?
    public var secretServiceKeyCacheSeconds: Int?
    public var sharedDeviceMode: Bool?
    public var clientCapabilities: [String]?
    public var browser: Configuration.BrowserMode?
    public var authorityType: String?
    public var instanceDiscovery: Bool?
    public var httpTimeoutSeconds: Int?
    public var interactiveTimeoutSeconds: Int?
    public var postLogoutRedirectUri: String?
    /// Whether sign-in goes through the Linux identity broker.
    public var broker: BrokerMode?
    /// The broker's silent rescue (``Configuration/brokerSilentRescue``).
    public var brokerSilentRescue: Bool?
    /// The scope of `ssh-cert` requests (``SSHCertScope``).
    public var sshCertScope: String?
    /// Whether the `az` shim hands a command it does not answer to a real Azure CLI further
    /// down `PATH` (read by the shim only; the engine ignores it).
    public var azPassthrough: Bool?
    /// Read by the `az` shim only: Resource Manager's base URL for the subscriptions it lists
    /// (default: the Azure cloud's, for an Entra authority of a known cloud).
    public var armEndpoint: String?
    /// The scopes a forwarded session (the agent's forward socket) may have tokens for (read
    /// by the agent from its own configuration only; the engine ignores it).
    public var forwardScopes: [String]?
    /// Who approves a sign-in a forwarded session asks for (read by the agent only).
    public var forwardApproval: ForwardApproval?
    /// The resource hosts (`host[:port]`) a forwarded session may have proof-of-possession
    /// requests signed for, on the laptop with its key (read by the agent only; absent: none).
    public var forwardProofOfPossession: [String]?
    /// Where an app's client assertion comes from (``ClientAssertionSetting``).
    public var clientAssertion: ClientAssertionSetting?
    /// The private keys whose SSH certificates the agent keeps fresh (read by the agent only).
    public var sshCertificates: [String]?
    /// Whether the agent also adds each key and certificate to `$SSH_AUTH_SOCK` (read by the agent only).
    public var sshAgent: Bool?
    /// Python package feeds beyond Azure Artifacts: URL prefix -> scope (read by the `keyring` name only).
    public var packageFeeds: [String: String]?
    /// Registries (host[:port]) beyond ACR's login servers that the Docker credential helper
    /// answers (read by the helper and `docker-config` only).
    public var containerRegistries: [String]?

    public init() {}

    /// The contract's configuration keys.
    public static let keys: Set<String> = [
        "clientId", "authority", "redirectUri", "knownAuthorities", "scopes", "graphEndpoint",
        "cache", "sharedDeviceMode", "clientCapabilities", "browser", "authorityType", "instanceDiscovery",
        "httpTimeoutSeconds", "interactiveTimeoutSeconds", "postLogoutRedirectUri", "azPassthrough", "armEndpoint", "cacheProtection",
        "secretServiceKeyCacheSeconds", "redirectPort", "forwardScopes", "forwardApproval", "forwardProofOfPossession", "broker",
        "brokerSilentRescue",
        ClientAssertionSetting.key, "sshCertScope", "sshCertificates", "sshAgent",
        "packageFeeds", "containerRegistries",
    ]

    /// Reads the configuration keys from `params` (other members must be in `alsoAllowed`).
    public init(params: JSONValue?, alsoAllowed: Set<String> = []) throws(RPCError) {
        let p = try Params(params, allowed: Self.keys.union(alsoAllowed))
        clientId = try p.optional("clientId")
        authority = try p.optional("authority")
        redirectUri = try p.optional("redirectUri")
        redirectPort = try p.optional("redirectPort")
        knownAuthorities = try p.optional("knownAuthorities")
        scopes = try p.optional("scopes")
        graphEndpoint = try p.optional("graphEndpoint")
        sharedDeviceMode = try p.optional("sharedDeviceMode")
        clientCapabilities = try p.optional("clientCapabilities")
        browser = try p.optional("browser", oneOf: ["system", "client"]).flatMap(Configuration.BrowserMode.init)
        authorityType = try p.optional("authorityType", oneOf: ["aad", "b2c", "ciam", "oidc"])
        instanceDiscovery = try p.optional("instanceDiscovery")
        httpTimeoutSeconds = try p.optional("httpTimeoutSeconds")
        interactiveTimeoutSeconds = try p.optional("interactiveTimeoutSeconds")
        postLogoutRedirectUri = try p.optional("postLogoutRedirectUri")
        broker = try p.optional("broker", oneOf: BrokerMode.allCases.map(\.rawValue)).flatMap(BrokerMode.init)
        brokerSilentRescue = try p.optional("brokerSilentRescue")
        sshCertScope = try p.optional("sshCertScope")
        sshCertificates = try SSHCertScope.keptKeys(p)
        sshAgent = try p.optional("sshAgent")
        azPassthrough = try p.optional("azPassthrough")
        packageFeeds = try Self.stringMap(p.optional("packageFeeds"), key: "packageFeeds")
        containerRegistries = try p.optional("containerRegistries")
        armEndpoint = try p.optional("armEndpoint")
        forwardScopes = try p.optional("forwardScopes")
        forwardApproval = try ForwardApproval(p.members["forwardApproval"])
        forwardProofOfPossession = try ForwardPolicy.popHosts(p.optional("forwardProofOfPossession"))
        clientAssertion = try ClientAssertionSetting(p)
        cacheProtection = try p.optional("cacheProtection", oneOf: CacheProtection.names).flatMap(CacheProtection.init(name:))
        secretServiceKeyCacheSeconds = try p.optional("secretServiceKeyCacheSeconds")
        if let cacheParams = try p.nested("cache", allowed: ["path", "persistence", "encryption"]) {
            let persistence = try cacheParams.optional("persistence", oneOf: ["file", "memory"])
            let path: String? = try cacheParams.optional("path")
            let encryption = try cacheParams.nested("encryption", allowed: ["keyFile", "keyCommand"])
            let keyFile: String? = try encryption?.optional("keyFile")
            let keyCommand: [String]? = try encryption?.optional("keyCommand")
            if encryption != nil, (keyFile == nil) == (keyCommand == nil) {
                throw .invalidParams("cache.encryption: give either keyFile or keyCommand", member: "cache.encryption")
            }
            if persistence == "memory" {
                guard path == nil else { throw .invalidParams("cache: give either a path or persistence \"memory\"", member: "cache.path") }
                guard encryption == nil else { throw .invalidParams("cache: a memory cache is not encrypted", member: "cache.encryption") }
                cache = .memory
            } else {
                cache = .file(path: path ?? Configuration.defaultCachePath(), keyFile: keyFile, keyCommand: keyCommand)
            }
        }
    }

    /// These overrides layered on top of `base` (a key set here wins).
    public func merged(over base: ConfigurationOverrides) -> ConfigurationOverrides {
        var result = base
        result.clientId = clientId ?? base.clientId
        result.authority = authority ?? base.authority
        result.redirectUri = redirectUri ?? base.redirectUri
        result.redirectPort = redirectPort ?? base.redirectPort
        result.knownAuthorities = knownAuthorities ?? base.knownAuthorities
        result.scopes = scopes ?? base.scopes
        result.graphEndpoint = graphEndpoint ?? base.graphEndpoint
        result.cache = cache ?? base.cache
        result.cacheProtection = cacheProtection ?? base.cacheProtection
        result.secretServiceKeyCacheSeconds = secretServiceKeyCacheSeconds ?? base.secretServiceKeyCacheSeconds
        result.sharedDeviceMode = sharedDeviceMode ?? base.sharedDeviceMode
        result.clientCapabilities = clientCapabilities ?? base.clientCapabilities
        result.browser = browser ?? base.browser
        result.authorityType = authorityType ?? base.authorityType
        result.instanceDiscovery = instanceDiscovery ?? base.instanceDiscovery
        result.httpTimeoutSeconds = httpTimeoutSeconds ?? base.httpTimeoutSeconds
        result.interactiveTimeoutSeconds = interactiveTimeoutSeconds ?? base.interactiveTimeoutSeconds
        result.postLogoutRedirectUri = postLogoutRedirectUri ?? base.postLogoutRedirectUri
        result.broker = broker ?? base.broker
        result.brokerSilentRescue = brokerSilentRescue ?? base.brokerSilentRescue
        result.sshCertScope = sshCertScope ?? base.sshCertScope
        result.sshCertificates = sshCertificates ?? base.sshCertificates
        result.sshAgent = sshAgent ?? base.sshAgent
        result.azPassthrough = azPassthrough ?? base.azPassthrough
        result.packageFeeds = packageFeeds ?? base.packageFeeds
        result.containerRegistries = containerRegistries ?? base.containerRegistries
        result.armEndpoint = armEndpoint ?? base.armEndpoint
        result.forwardScopes = forwardScopes ?? base.forwardScopes
        result.forwardApproval = forwardApproval ?? base.forwardApproval
        result.forwardProofOfPossession = forwardProofOfPossession ?? base.forwardProofOfPossession
        result.clientAssertion = clientAssertion ?? base.clientAssertion
        return result
    }

    /// The complete, validated configuration; -32602 naming the first bad key.
    public func resolved() throws(RPCError) -> Configuration {
        guard let clientId, !clientId.isEmpty else {
            throw .invalidParams("missing member 'clientId' (the application's client ID)", member: "clientId")
        }
        var config = Configuration(clientId: clientId)
        if let authority { config.authority = authority }
        if let redirectUri { config.redirectUri = redirectUri }
        if let redirectPort { config.redirectUri = try Self.redirectURI(config.redirectUri, port: redirectPort) }
        if let knownAuthorities { config.knownAuthorities = knownAuthorities }
        if let scopes { config.scopes = scopes }
        if let graphEndpoint { config.graphEndpoint = graphEndpoint }
        if let cache { config.cache = cache }
        if let cacheProtection { config.cacheProtection = cacheProtection }
        if let secretServiceKeyCacheSeconds { config.secretServiceKeyCacheSeconds = secretServiceKeyCacheSeconds }
        if let sharedDeviceMode { config.sharedDeviceMode = sharedDeviceMode }
        if let clientCapabilities { config.clientCapabilities = clientCapabilities }
        if let browser { config.browser = browser }
        config.authorityType = authorityType
        if let instanceDiscovery { config.instanceDiscovery = instanceDiscovery }
        if let httpTimeoutSeconds { config.httpTimeoutSeconds = httpTimeoutSeconds }
        if let interactiveTimeoutSeconds { config.interactiveTimeoutSeconds = interactiveTimeoutSeconds }
        config.postLogoutRedirectUri = postLogoutRedirectUri
        if let broker { config.broker = broker }
        if let brokerSilentRescue { config.brokerSilentRescue = brokerSilentRescue }
        config.clientAssertion = clientAssertion
        config.sshCertScope = sshCertScope
        try ConfigurationValidator.validate(config)
        return config
    }

    /// An object whose members are all strings, as a dictionary; -32602 naming `key` otherwise.
    static func stringMap(_ object: JSONObject?, key: String) throws(RPCError) -> [String: String]? {
        guard let object else { return nil }
        var map: [String: String] = [:]
        for (name, value) in object {
            guard let text = value.stringValue else { throw .invalidParams("\(key).\(name) must be a string", member: key) }
            map[name] = text
        }
        return map
    }

    /// `uri` with its port replaced by `port` (1-65535); an invalid `uri` is left to the validator.
    static func redirectURI(_ uri: String, port: Int) throws(RPCError) -> String {
        guard (1...65_535).contains(port) else { throw .invalidParams("redirectPort must be a port (1-65535)", member: "redirectPort") }
        guard let parsed = try? RedirectURI(parsing: uri) else { return uri }
        return "http://\(parsed.host):\(port)\(parsed.path)"
    }
}
