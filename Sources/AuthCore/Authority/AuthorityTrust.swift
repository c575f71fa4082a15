/// Decides whether an authority may be used, and whether instance discovery validates it.
///
/// Part of the issuer rule (ARCHITECTURE.md): an origin on a loopback host or on a port other
/// than the default is trusted only as configured, the configured authority's origin or a
/// `knownAuthorities` entry naming that port, so a request cannot point the account's tokens
/// at another local service.
public struct AuthorityTrust: Sendable {
    /// Microsoft's public and sovereign cloud sign-in hosts.
    public static let wellKnownHosts: Set<String> = [
        "login.microsoftonline.com", "login.microsoft.com", "login.windows.net", "sts.windows.net",
        "login.chinacloudapi.cn", "login.partner.microsoftonline.cn", "login.microsoftonline.us",
        "login.usgovcloudapi.net", "login.microsoftonline.de",
    ]

    /// `knownAuthorities` from the configuration: hosts, `host:port` or URLs (host lower-cased).
    public let knownHosts: Set<String>
    /// The same entries as origins (`host:port`, the default port when none is named).
    let knownOrigins: Set<OriginKey>
    /// The configured authority's origin, trusted whatever its host and port.
    let configuredOrigin: OriginKey?
    /// `instanceDiscovery` from the configuration: validate and find aliases of AAD hosts.
    public let instanceDiscovery: Bool

    public init(knownAuthorities: [String], instanceDiscovery: Bool = true, configured: Authority? = nil) {
        let origins = knownAuthorities.compactMap(OriginKey.init(entry:))
        knownHosts = Set(origins.map(\.host))
        knownOrigins = Set(origins)
        configuredOrigin = configured.map(OriginKey.init(authority:))
        self.instanceDiscovery = instanceDiscovery
    }

    /// What to do before using `authority`.
    public enum Decision: Equatable, Sendable {
        /// Use it as it is (listed, B2C/CIAM/OIDC, or discovery off).
        case trusted
        /// Ask instance discovery (aliases; validation of a host not known to be Microsoft's).
        case discover(validates: Bool)
    }

    public func decide(_ authority: Authority) throws(AuthError) -> Decision {
        let origin = OriginKey(authority: authority)
        if origin != configuredOrigin, !knownOrigins.contains(origin), origin.isLoopback || !origin.hasDefaultPort {
            throw AuthError(
                .authorityNotTrusted,
                "\(authority.origin) is not the configured authority's origin; a loopback host or a non-default port is trusted only when configured: list \(origin) in knownAuthorities"
            )
        }
        if knownHosts.contains(authority.host) { return .trusted }
        switch authority.kind {
        case .ciam, .oidc: return .trusted
        case .b2c:
            throw AuthError(.authorityNotTrusted, "the B2C host \(authority.host) must be listed in knownAuthorities")
        case .aad:
            guard instanceDiscovery else { return .trusted }
            return .discover(validates: !Self.wellKnownHosts.contains(authority.host))
        }
    }
}
