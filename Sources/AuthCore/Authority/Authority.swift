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
    /// `https`, or `http` for a loopback host.
    public let scheme: String
    /// `https://host[:port]`.
    public let origin: String
    /// The host name without port.
    public let host: String
    /// The port, when the URL names one.
    public let port: Int?
    /// `localhost`, 127.0.0.0/8 or `::1`.
    let isLoopback: Bool
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
        scheme = parts.scheme
        origin = parts.origin
        host = parts.host
        port = parts.port
        isLoopback = parts.isLoopback
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
            declared == .b2c || declared == nil && (host.hasSuffix(".b2clogin.com") || segments[1].lowercased().hasPrefix("b2c_"))
        {
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
        try Self.checkPath(segments, tenant: kind == .oidc ? nil : tenant)
    }

    /// No `.` or `..` segment in any authority, and a Microsoft authority's tenant a tenant
    /// (``TenantName``): a tenant `..` would take the requests elsewhere on the host.
    private static func checkPath(_ segments: [String], tenant: String?) throws(AuthError) {
        if let tenant, let problem = TenantName.problem(tenant) {
            throw AuthError(.invalidConfiguration, "the authority's tenant \(problem)")
        }
        if let dot = segments.first(where: TenantName.isDotSegment) {
            throw AuthError(.invalidConfiguration, "an authority's path must not hold a '\(dot)' segment")
        }
    }

    /// The cache's `environment` for this authority's tokens (the issuer rule, see
    /// ARCHITECTURE.md). For Microsoft authorities the origin: on https's default port the
    /// host, as every MSAL keys it (tokens move between SDKs), on any other port `host:port`,
    /// so two ports never share a token. For a generic OpenID provider the issuer itself,
    /// `host[:port]/path` (the path as written: paths are case-sensitive), so two issuers on
    /// one host never share a token.
    public var cacheEnvironment: String {
        let environment = OriginKey(authority: self).environment
        guard kind == .oidc else { return environment }
        return environment + url.dropFirst(origin.count)
    }

    /// Whether the authority's tokens are shared with its host's aliases (instance discovery,
    /// the built-in cloud aliases): a Microsoft authority on https's default port and not on a
    /// loopback host. Any other origin is its own, alone.
    public var sharesHostAliases: Bool {
        let origin = OriginKey(authority: self)
        return kind != .oidc && origin.hasDefaultPort && !origin.isLoopback
    }

    /// The authority as a key of what is kept per authority (discovery): a generic issuer's
    /// URL as it is (its path is case-sensitive), a Microsoft authority's lower-cased (tenants
    /// and policies are not). Scheme and host are lower-case in both.
    public var key: String { kind == .oidc ? url : url.lowercased() }

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
