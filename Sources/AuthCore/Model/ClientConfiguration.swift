#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Logging
import Loopback
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
    /// How long an interactive sign-in may wait for the browser.
    public var interactiveTimeout: Duration = .seconds(600)

    public init(clientId: String, authority: Authority, redirectURI: String = "http://localhost",
                knownAuthorities: [String] = [], defaultScopes: [String] = ["user.read"],
                clientCapabilities: [String] = [], sharedDeviceMode: Bool = false) {
        self.clientId = clientId
        self.authority = authority
        self.redirectURI = redirectURI
        self.knownAuthorities = knownAuthorities
        self.defaultScopes = defaultScopes
        self.clientCapabilities = clientCapabilities
        self.sharedDeviceMode = sharedDeviceMode
    }
}

/// The current time in Unix seconds (a seam: tests move it).
public protocol AuthClock: Sendable {
    func now() -> Int64
}

public struct SystemClock: AuthClock {
    public init() {}
    public func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
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

    public init(transport: any HTTPTransport, cache: TokenCache, clock: any AuthClock = SystemClock(),
                browser: any BrowserLauncher, listener: any RedirectListener, logger: Logger) {
        self.transport = transport
        self.cache = cache
        self.clock = clock
        self.browser = browser
        self.listener = listener
        self.logger = logger
    }
}

/// The sign-in host names of one cloud: a token cached under one is found under the others.
public enum EnvironmentAliases {
    static let clouds: [[String]] = [
        ["login.microsoftonline.com", "login.windows.net", "login.microsoft.com", "sts.windows.net"],
        ["login.partner.microsoftonline.cn", "login.chinacloudapi.cn"],
        ["login.microsoftonline.us", "login.usgovcloudapi.net"],
    ]

    public static func of(_ host: String) -> [String] {
        clouds.first { $0.contains(host) } ?? [host]
    }
}
