import AuthCore
import JSON
import TokenCache

/// Which scopes `forwardScopes` covers, for the request and for the token that leaves (case
/// ignored as MSAL does; the OpenID Connect scopes say nothing about a resource and are never
/// refused). `RESOURCE/.default` covers every scope of that resource: it is the token the
/// service grants for it.
public struct ForwardScopes: Sendable {
    /// The laptop's `forwardScopes`.
    public let allowed: [String]

    public init(_ allowed: [String]?) { self.allowed = ScopeSet(allowed ?? []).resourceScopes }

    /// Scopes that are about who signed in, not what a token is for: never refused (`email`
    /// is in every Entra token's `scp` beside them).
    static let identityScopes: Set<String> = ScopeSet.openIDConnectScopes.union(["email"])

    /// The scopes a forwarded request is for: its own when they name a resource, else the
    /// session's `defaults` (the engine's one rule, `Scopes.requested`).
    public static func requestScopes(_ requested: [String]?, defaults: [String]) -> [String] {
        Scopes.requested(requested, defaults: defaults)
    }

    /// The scopes of `requested` this list does not cover (nothing is covered by an empty list).
    public func unlisted(_ requested: [String]) -> [String] {
        ScopeSet(requested).resourceScopes.filter { !covers($0) }
    }

    /// Whether `scope` (as a request or a token result names it, resource included) is covered.
    public func covers(_ scope: String) -> Bool {
        let lower = scope.lowercased()
        if Self.identityScopes.contains(lower) { return true }
        return allowed.contains { listed in
            let listed = listed.lowercased()
            return listed == lower || (listed.hasSuffix("/.default") && lower.hasPrefix(String(listed.dropLast(".default".count))))
        }
    }

    /// Whether a JWT access token's `scp` entry or `roles` entry `name` (a scope's name without
    /// its resource), for audience `audience`, is covered.
    func coversClaim(_ name: String, audience: String?) -> Bool {
        let lower = name.lowercased()
        if Self.identityScopes.contains(lower) { return true }
        let audience = audience.map(Self.resource)
        return allowed.contains { listed in
            let listed = listed.lowercased()
            guard let slash = listed.lastIndex(of: "/") else { return listed == lower }  // Graph's short form: "User.Read"
            let resource = Self.resource(String(listed[..<slash]))
            let scopeName = String(listed[listed.index(after: slash)...])
            let sameResource = audience.map { $0 == resource || $0.hasSuffix("/" + resource) || resource.hasSuffix("/" + $0) } ?? true
            return sameResource && (scopeName == lower || scopeName == ".default")
        }
    }

    /// A resource or audience compared without case, a trailing slash, or an `api://` prefix.
    private static func resource(_ text: String) -> String {
        var text = text.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        if text.hasPrefix("api://") { text.removeFirst("api://".count) }
        return text
    }
}
