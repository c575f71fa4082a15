import AuthSeams
import Logging
import TokenCache

/// The public client application's settings, as the auth core needs them.
public struct ClientConfiguration: Sendable {
    public var clientId: String
    public var authority: Authority
    /// `http://localhost` (any free port) or a fixed loopback URI.
    public var redirectURI: String
    public var knownAuthorities: [String]
    public var defaultScopes: [String]
    public var clientCapabilities: [String]
    public var sharedDeviceMode: Bool
    /// Validate AAD hosts and find their aliases with instance discovery.
    public var instanceDiscovery = true
    /// How long an interactive sign-in may wait for the browser.
    public var interactiveTimeout: Duration = .seconds(600)
    /// Where the authority sends the browser after a sign-out (`post_logout_redirect_uri`,
    /// registered with the application); `nil`: not sent.
    public var postLogoutRedirectURI: String?
    /// Whether sign-in goes through the Linux identity broker (``AuthDependencies/broker``).
    public var brokerMode = BrokerMode.off
    /// The time limit of a broker call other than an interactive sign-in.
    public var brokerTimeout: Duration = .seconds(30)
    /// The broker's silent rescue (`brokerSilentRescue`): a silent call the broker answers
    /// InteractionRequired (status 2) is tried once more as `acquireTokenInteractively` with the
    /// same parameters, within ``interactiveTimeout``, where ``display`` is set.
    public var brokerSilentRescue = false
    /// Which variable says this process has a display (`DISPLAY=:0`), if any: a broker may
    /// show a window there.
    public var display: String?
    /// Set: a confidential client signing in as itself with this client assertion (workload
    /// identity federation); silent requests answer app tokens, interactive ones refuse.
    public var clientAssertion: (any ClientAssertionSource)?

    public init(
        clientId: String, authority: Authority, redirectURI: String = "http://localhost",
        knownAuthorities: [String] = [], defaultScopes: [String] = ["user.read"],
        clientCapabilities: [String] = [], sharedDeviceMode: Bool = false
    ) {
        self.clientId = clientId
        self.authority = authority
        self.redirectURI = redirectURI
        self.knownAuthorities = knownAuthorities
        self.defaultScopes = defaultScopes
        self.clientCapabilities = clientCapabilities
        self.sharedDeviceMode = sharedDeviceMode
    }
}

extension ClientConfiguration {
    /// A request's authority (`nil`: the configured one), parsed as the configured kind
    /// when that is a generic OIDC provider.
    public func authority(for text: String?) throws(AuthError) -> Authority {
        guard let text else { return authority }
        return try Authority(text, declared: authority.kind == .oidc ? .oidc : nil)
    }
}

/// Everything the flows talk to, each behind a seam.
public struct AuthDependencies: Sendable {
    public var transport: any HTTPTransport
    public var cache: TokenCache
    public var clock: any AuthClock
    public var browser: any BrowserLauncher
    public var listener: any RedirectListener
    public var logger: Logger
    /// The Linux identity broker, used as ``ClientConfiguration/brokerMode`` says (`nil`: none).
    public var broker: (any IdentityBroker)?
    /// The cache's proof-of-possession key (by default one of this process's own: the
    /// composition root gives the cache's, kept sealed beside an encrypted cache).
    public var popKeys = PopKeyHolder(file: nil)
    /// A fresh correlation id, for a broker call a request makes besides its own (the sidecar
    /// gives its pooled generator; by default a random version-4 UUID).
    public var newCorrelationId: @Sendable () -> String = {
        let digits = (0..<32).map { _ in String(UInt8.random(in: 0..<16), radix: 16) }
        let text = digits[0..<12].joined() + "4" + digits[13..<16].joined() + "8" + digits[17..<32].joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { text.dropFirst($0.lowerBound).prefix($0.count) }
        return parts.joined(separator: "-")
    }

    public init(
        transport: any HTTPTransport, cache: TokenCache, clock: any AuthClock = SystemClock(),
        browser: any BrowserLauncher, listener: any RedirectListener, logger: Logger
    ) {
        self.transport = transport
        self.cache = cache
        self.clock = clock
        self.browser = browser
        self.listener = listener
        self.logger = logger
    }
}

/// The sign-in host names of one cloud: a token cached under one is found under the others.
/// Built in for Microsoft's clouds; ``AuthorityResolver`` adds what instance discovery says.
public enum EnvironmentAliases {
    static let clouds: [[String]] = [
        ["login.microsoftonline.com", "login.windows.net", "login.microsoft.com", "sts.windows.net"],
        ["login.partner.microsoftonline.cn", "login.chinacloudapi.cn"],
        ["login.microsoftonline.us", "login.usgovcloudapi.net"],
    ]

    public static func of(_ host: String) -> [String] {
        let lower = host.lowercased()
        return clouds.first { $0.contains(lower) } ?? [lower]
    }
}
