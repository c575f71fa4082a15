import AuthSeams

/// Who issues the tokens: an Entra ID (AAD) tenant or audience, an Azure AD B2C user-flow
/// policy, an External ID (CIAM) tenant, or any OpenID Connect provider.
///
/// | form | kind |
/// |---|---|
/// | `https://login.microsoftonline.com/{common|organizations|consumers|tenant}` | ``Kind/aad`` |
/// | `https://{host}/tfp/{tenant}/{policy}`, `https://{host}/{tenant}/{policy}` (b2clogin.com, or a `b2c_` policy) | ``Kind/b2c`` |
/// | `https://{tenant}.ciamlogin.com/[{tenant}]` | ``Kind/ciam`` (no path: `{tenant}.onmicrosoft.com`) |
/// | any issuer URL, declared `oidc` | ``Kind/oidc``: discovery at `{issuer}/.well-known/openid-configuration` |
public struct Authority: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable { case aad, b2c, ciam, oidc }

    public let kind: Kind
    /// `https://host[:port]`.
    public let origin: String
    /// The host name without port.
    public let host: String
    /// The port, when the URL names one.
    public let port: Int?
    /// The tenant (the first path segment, or the CIAM default): the cache's `realm`.
    public let tenant: String
    /// The B2C user-flow policy, lower-cased.
    public let policy: String?
    /// The authority without a trailing slash, e.g. `https://login.microsoftonline.com/common`.
    public let url: String

    public var description: String { url }

    /// Parses an authority; `declared` forces a kind (e.g. a B2C or CIAM custom domain),
    /// `nil` detects it from the URL.
    public init(_ text: String, declared: Kind? = nil) throws(AuthError) {
        guard let parts = URLParts(text) else {
            throw AuthError(.invalidConfiguration, "the authority '\(text)' is not an absolute https URL")
        }
        guard parts.isSecureOrLoopback else {
            throw AuthError(.insecureAuthority, "the authority must use https (http is allowed only for loopback hosts)")
        }
        let segments = parts.path.prefix { $0 != "?" && $0 != "#" }.split(separator: "/").map(String.init)
        origin = parts.origin
        host = parts.host
        port = parts.port
        if declared == .oidc {
            kind = .oidc
            tenant = segments.first ?? host
            policy = nil
            url = ([origin] + segments).joined(separator: "/")
        } else if declared == .ciam || declared == nil && host.hasSuffix(".ciamlogin.com") {
            kind = .ciam
            let subdomain = host.hasSuffix(".ciamlogin.com") ? String(host.dropLast(".ciamlogin.com".count)) : nil
            guard let resolvedTenant = segments.first ?? subdomain.map({ "\($0).onmicrosoft.com" }) else {
                throw AuthError(.invalidConfiguration, "a CIAM authority on a custom domain must name its tenant: https://{host}/{tenant}")
            }
            tenant = resolvedTenant
            policy = nil
            url = "\(origin)/\(tenant)"
        } else if segments.first?.lowercased() == "tfp", segments.count >= 3, declared == nil || declared == .b2c {
            kind = .b2c
            tenant = segments[1]
            policy = segments[2].lowercased()
            url = "\(origin)/tfp/\(tenant)/\(segments[2])"
        } else if segments.count >= 2,
                  declared == .b2c || declared == nil && (host.hasSuffix(".b2clogin.com") || segments[1].lowercased().hasPrefix("b2c_")) {
            kind = .b2c
            tenant = segments[0]
            policy = segments[1].lowercased()
            url = "\(origin)/\(tenant)/\(segments[1])"
        } else if declared == .b2c {
            throw AuthError(.invalidConfiguration, "a B2C authority names its tenant and policy: https://{host}/{tenant}/{policy}")
        } else if let first = segments.first {
            kind = .aad
            tenant = first
            policy = nil
            url = "\(origin)/\(first)"
        } else {
            throw AuthError(.invalidConfiguration, "the authority '\(text)' names no tenant (e.g. https://login.microsoftonline.com/common)")
        }
    }

    /// The cache's `environment` for this authority's tokens (the issuer rule, see
    /// ARCHITECTURE.md): for Microsoft authorities the host, as every MSAL keys it (tokens
    /// move between SDKs; trust keeps other ports out); for a generic OpenID provider the
    /// issuer itself, `host[:port]/path`, so two issuers on one host never share a token.
    public var cacheEnvironment: String {
        guard kind == .oidc else { return host }
        return String(url.drop { $0 != ":" }.dropFirst(3)).lowercased()
    }

    /// The OpenID Connect discovery document.
    public var metadataURL: String {
        kind == .oidc ? "\(url)/.well-known/openid-configuration" : "\(url)/v2.0/.well-known/openid-configuration"
    }

    /// `common`, `organizations` or `consumers`: not one tenant.
    public var isMultiTenant: Bool {
        kind == .aad && ["common", "organizations", "consumers"].contains(tenant.lowercased())
    }

    /// The same authority for another tenant (`common` -> a tenant id).
    public func with(tenant newTenant: String) -> Authority {
        guard kind == .aad, let other = try? Authority("\(origin)/\(newTenant)", declared: nil) else { return self }
        return other
    }
}

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
            throw AuthError(.authorityNotTrusted, "\(authority.origin) is not the configured authority's origin; a loopback host or a non-default port is trusted only when configured: list \(origin) in knownAuthorities")
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

/// An origin as trust compares it: the host and the port in use (443 when none is named).
struct OriginKey: Hashable, Sendable, CustomStringConvertible {
    let host: String
    let port: Int
    let isLoopback: Bool

    var hasDefaultPort: Bool { port == 443 }
    var description: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    init(authority: Authority) {
        let parts = URLParts(authority.origin)
        host = authority.host
        port = authority.port ?? (parts?.scheme == "http" ? 80 : 443)
        isLoopback = parts?.isLoopback ?? false
    }

    /// A `knownAuthorities` entry: a URL, `host:port` or a host.
    init?(entry: String) {
        let text = entry.contains("://") ? entry : "https://" + entry
        guard let parts = URLParts(text) else { return nil }
        host = parts.host
        port = parts.port ?? (parts.scheme == "http" ? 80 : 443)
        isLoopback = parts.isLoopback
    }
}
