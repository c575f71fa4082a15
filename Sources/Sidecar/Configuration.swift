import AuthCore
import JSON
import JSONRPC
import TokenCache

/// The public client application's settings: the contract's start-up keys.
///
/// Built from (lowest to highest precedence) the defaults, `--config FILE`, the other
/// command-line options, and the `initialize` request.
public struct Configuration: Sendable, Equatable {
    /// Where the token cache lives.
    public enum CacheSetting: Sendable, Equatable {
        /// A file in MSAL's format, encrypted at rest (AES-256-GCM) with a key from the layer
        /// ``Configuration/cacheProtection`` picks; `keyFile` and `keyCommand` configure layer 3.
        case file(path: String, keyFile: String? = nil, keyCommand: [String]? = nil)
        case memory

        /// The `cache` key's value, as `initialize` takes it and reports it.
        public var json: JSONValue {
            switch self {
            case .file(let path, nil, nil): ["path": .string(path)]
            case .file(let path, let keyFile?, _): ["path": .string(path), "encryption": ["keyFile": .string(keyFile)]]
            case .file(let path, nil, let command?): ["path": .string(path), "encryption": ["keyCommand": JSONValue(command)]]
            case .memory: ["persistence": "memory"]
            }
        }
    }

    /// Who opens the sign-in page.
    public enum BrowserMode: String, Sendable, Equatable {
        case system, client
    }

    public var clientId: String
    public var authority = "https://login.microsoftonline.com/common"
    /// The redirect URI when none is configured: one the loopback listener serves
    /// (`ConfigurationTests` checks it with the listener's parser, so starts need not).
    public static let defaultRedirectUri = "http://localhost"
    public var redirectUri = Configuration.defaultRedirectUri
    public var knownAuthorities: [String] = []
    public var scopes = ["user.read"]
    public var graphEndpoint = "https://graph.microsoft.com/"
    public var cache: CacheSetting
    /// Which key store layer protects a file cache: `auto` (the first that works) or one by name.
    public var cacheProtection = CacheProtection.auto
    /// How long the kernel keyring keeps a copy of the Secret Service's key for the next
    /// process (0: no copy; the service is asked by every process), in seconds.
    public var secretServiceKeyCacheSeconds = SecretServiceKeySource.defaultKeyCopySeconds
    public var sharedDeviceMode = false
    public var clientCapabilities: [String] = []
    public var browser = BrowserMode.system
    /// `aad`, `b2c`, `ciam` or `oidc`; `nil`: detected from the authority URL.
    public var authorityType: String?
    /// Validate AAD hosts and find their aliases with instance discovery.
    public var instanceDiscovery = true
    /// The time limit of every HTTP request to the identity service and Graph (a
    /// `callGraph` may set its own), in seconds.
    public var httpTimeoutSeconds = 30
    /// How long a browser sign-in may wait for the redirect (cancellable sooner), in seconds.
    public var interactiveTimeoutSeconds = 600
    /// Where the authority sends the browser after `signout` with `signoutFromBrowser`
    /// (`post_logout_redirect_uri`, registered with the application); `nil`: not sent.
    public var postLogoutRedirectUri: String?
    /// Whether sign-in goes through the Linux identity broker (`off`, `auto`, `required`).
    public var broker = BrokerMode.off
    /// A silent call the broker answers InteractionRequired (status 2) is tried once more as
    /// an interactive one with the same parameters, within ``interactiveTimeoutSeconds``, where
    /// a display is set (a broker can often mint the token with no window). Off by default.
    public var brokerSilentRescue = false
    /// Set: the engine signs in as the app with this client assertion (app tokens only).
    public var clientAssertion: ClientAssertionSetting?
    /// The scope of `ssh-cert` requests; `nil`: the PAS scope of the authority's cloud (``SSHCertScope``).
    public var sshCertScope: String?

    /// The accepted range of ``httpTimeoutSeconds``.
    public static let httpTimeoutRange = 1...300
    /// The accepted range of ``interactiveTimeoutSeconds``.
    public static let interactiveTimeoutRange = 1...3600
    /// The accepted range of ``secretServiceKeyCacheSeconds``.
    public static let secretServiceKeyCacheRange = 0...3600

    public init(clientId: String, cache: CacheSetting = .file(path: Configuration.defaultCachePath())) {
        self.clientId = clientId
        self.cache = cache
    }

    /// `$XDG_CACHE_HOME/auth-sidecar/msal_token_cache.json`, else under `~/.cache` (the home
    /// of ``UserPaths/home(_:)``: the password database's without `HOME`).
    public static func defaultCachePath(environment: [String: String]) -> String {
        defaultCachePath { environment[$0] }
    }

    /// ``defaultCachePath(environment:)`` with the variables `variable` looks up: by default only
    /// the two it needs, from the process's environment (every start resolves a configuration;
    /// no copy of the whole environment, ARCHITECTURE.md "Start-up cost").
    public static func defaultCachePath(variable: (String) -> String? = ProcessEnvironment.value) -> String {
        let base =
            variable("XDG_CACHE_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((UserPaths.home(variable) ?? "/tmp") + "/.cache")
        return base + "/auth-sidecar/msal_token_cache.json"
    }

    /// A named profile's own cache file: `msal_token_cache.NAME.json` beside the default one
    /// (``ConfigurationFile``: profiles do not share accounts unless their `cache` says so).
    public static func defaultCachePath(profile: String, variable: (String) -> String? = ProcessEnvironment.value) -> String {
        let shared = defaultCachePath(variable: variable)
        return String(shared.dropLast(".json".count)) + ".\(profile).json"
    }

    /// The configuration as `initialize` reports it back (no secrets exist in it).
    public var json: JSONValue {
        guard case .object(var object) = baseJSON else { return baseJSON }
        // Echoed only when set: the shape clients already compare stays as it was.
        if let postLogoutRedirectUri { object["postLogoutRedirectUri"] = .string(postLogoutRedirectUri) }
        if broker != .off { object["broker"] = .string(broker.rawValue) }
        if brokerSilentRescue { object["brokerSilentRescue"] = true }
        if let clientAssertion { object[ClientAssertionSetting.key] = clientAssertion.json }
        if let sshCertScope { object["sshCertScope"] = .string(sshCertScope) }
        // Echoed for a file cache only (a memory cache has nothing to protect), when not the default.
        if cacheProtection != .auto, case .file = cache { object["cacheProtection"] = .string(cacheProtection.name) }
        if secretServiceKeyCacheSeconds != SecretServiceKeySource.defaultKeyCopySeconds, case .file = cache {
            object["secretServiceKeyCacheSeconds"] = .int(Int64(secretServiceKeyCacheSeconds))
        }
        return .object(object)
    }

    private var baseJSON: JSONValue {
        [
            "clientId": .string(clientId), "authority": .string(authority), "redirectUri": .string(redirectUri),
            "knownAuthorities": JSONValue(knownAuthorities), "scopes": JSONValue(scopes),
            "graphEndpoint": .string(graphEndpoint), "cache": cache.json,
            "sharedDeviceMode": .bool(sharedDeviceMode), "clientCapabilities": JSONValue(clientCapabilities),
            "browser": .string(browser.rawValue),
            "authorityType": JSONValue(authorityType), "instanceDiscovery": .bool(instanceDiscovery),
            "httpTimeoutSeconds": .int(Int64(httpTimeoutSeconds)),
            "interactiveTimeoutSeconds": .int(Int64(interactiveTimeoutSeconds)),
        ]
    }
}
