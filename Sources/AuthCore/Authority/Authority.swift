import HTTP

/// Who issues the tokens: an Entra ID (AAD) tenant or audience, an Azure AD B2C user-flow
/// policy, an External ID (CIAM) tenant, or any OpenID Connect provider.
///
/// | form | kind |
/// |---|---|
/// | `https://login.microsoftonline.com/{common|organizations|consumers|tenant}` | ``Kind/aad`` |
/// | `https://{host}/tfp/{tenant}/{policy}`, `https://{host}/{tenant}/{policy}` (b2clogin.com, or a `b2c_` policy) | ``Kind/b2c`` |
/// | `https://{tenant}.ciamlogin.com/[{tenant}]` | ``Kind/ciam`` (no path: `{tenant}.onmicrosoft.com`) |
public struct Authority: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable { case aad, b2c, ciam }

    public let kind: Kind
    /// `https://host[:port]`.
    public let origin: String
    /// The host name without port: the cache's `environment`.
    public let host: String
    /// The tenant (the first path segment, or the CIAM default): the cache's `realm`.
    public let tenant: String
    /// The B2C user-flow policy, lower-cased.
    public let policy: String?
    /// The authority without a trailing slash, e.g. `https://login.microsoftonline.com/common`.
    public let url: String

    public var description: String { url }

    public init(_ text: String) throws(AuthError) {
        guard let parts = URLParts(text) else {
            throw AuthError(.invalidConfiguration, "the authority '\(text)' is not an absolute https URL")
        }
        guard parts.isSecureOrLoopback else {
            throw AuthError(.insecureAuthority, "the authority must use https (http is allowed only for loopback hosts)")
        }
        let segments = parts.path.prefix { $0 != "?" && $0 != "#" }.split(separator: "/").map(String.init)
        origin = parts.origin
        host = parts.host
        if host.hasSuffix(".ciamlogin.com") {
            kind = .ciam
            tenant = segments.first ?? "\(host.dropLast(".ciamlogin.com".count)).onmicrosoft.com"
            policy = nil
            url = "\(origin)/\(tenant)"
        } else if segments.first?.lowercased() == "tfp", segments.count >= 3 {
            kind = .b2c
            tenant = segments[1]
            policy = segments[2].lowercased()
            url = "\(origin)/tfp/\(tenant)/\(segments[2])"
        } else if segments.count >= 2, host.hasSuffix(".b2clogin.com") || segments[1].lowercased().hasPrefix("b2c_") {
            kind = .b2c
            tenant = segments[0]
            policy = segments[1].lowercased()
            url = "\(origin)/\(tenant)/\(segments[1])"
        } else if let first = segments.first {
            kind = .aad
            tenant = first
            policy = nil
            url = "\(origin)/\(first)"
        } else {
            throw AuthError(.invalidConfiguration, "the authority '\(text)' names no tenant (e.g. https://login.microsoftonline.com/common)")
        }
    }

    /// The OpenID Connect discovery document.
    public var metadataURL: String { "\(url)/v2.0/.well-known/openid-configuration" }

    /// `common`, `organizations` or `consumers`: not one tenant.
    public var isMultiTenant: Bool {
        kind == .aad && ["common", "organizations", "consumers"].contains(tenant.lowercased())
    }

    /// The same authority for another tenant (`common` -> a tenant id).
    public func with(tenant newTenant: String) -> Authority {
        guard kind == .aad, let other = try? Authority("\(origin)/\(newTenant)") else { return self }
        return other
    }
}

/// Decides whether an authority's host may be used without instance discovery.
public struct AuthorityTrust: Sendable {
    /// Microsoft's public and sovereign cloud sign-in hosts.
    public static let wellKnownHosts: Set<String> = [
        "login.microsoftonline.com", "login.microsoft.com", "login.windows.net", "sts.windows.net",
        "login.chinacloudapi.cn", "login.partner.microsoftonline.cn", "login.microsoftonline.us",
        "login.usgovcloudapi.net", "login.microsoftonline.de",
    ]

    /// `knownAuthorities` from the configuration: hosts or URLs.
    public let knownHosts: Set<String>

    public init(knownAuthorities: [String]) {
        knownHosts = Set(knownAuthorities.map { entry in
            (URLParts(entry)?.host ?? entry.split(separator: "/").first.map(String.init) ?? entry)
                .split(separator: ":").first.map { String($0).lowercased() } ?? entry.lowercased()
        })
    }

    /// B2C and custom hosts must be listed; AAD's well-known hosts and CIAM are trusted.
    public func check(_ authority: Authority) throws(AuthError) {
        if knownHosts.contains(authority.host) { return }
        switch authority.kind {
        case .aad where Self.wellKnownHosts.contains(authority.host): return
        case .ciam: return
        case .b2c:
            throw AuthError(.authorityNotTrusted, "the B2C host \(authority.host) must be listed in knownAuthorities")
        case .aad:
            throw AuthError(.authorityNotTrusted, "the authority host \(authority.host) is not a known Microsoft host; list it in knownAuthorities to trust it")
        }
    }
}
