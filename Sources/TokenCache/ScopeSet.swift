/// A set of OAuth scopes compared case-insensitively, as MSAL compares them.
public struct ScopeSet: Sendable, Hashable {
    /// The scopes as given (duplicates, ignoring case, removed; empty strings dropped).
    public let scopes: [String]
    private let folded: Set<String>

    /// Scopes from any sequence of strings.
    public init<S: Sequence>(_ scopes: S) where S.Element == String {
        self.init(Array(scopes))
    }

    /// Scopes from a list. Not generic: called across modules, the generic form looked its
    /// iterator type up at run time (demangling it) on every fresh process's first request.
    public init(_ scopes: [String]) {
        var seen = Set<String>()
        var kept: [String] = []
        for scope in scopes where !scope.isEmpty && seen.insert(scope.lowercased()).inserted {
            kept.append(scope)
        }
        self.scopes = kept
        self.folded = seen
    }

    /// Scopes from a stored `target` (space-separated).
    public init(target: String) {
        self.init(target.utf8.split(separator: UInt8(ascii: " ")).map { String(Substring($0)) })
    }

    /// The `target` MSAL for Python stores: the scopes sorted by code point and joined by
    /// spaces, case kept (`"Mail.Read User.Read"`).
    public var target: String {
        scopes.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
            .joined(separator: " ")
    }

    public var isEmpty: Bool { scopes.isEmpty }

    /// Whether every scope of `other` is in this set (ignoring case).
    public func isSuperset(of other: ScopeSet) -> Bool { folded.isSuperset(of: other.folded) }

    /// The OpenID Connect scopes every token request carries, in the order they are added;
    /// they say nothing about which resource a token is for.
    public static let openIDConnect = ["openid", "profile", "offline_access"]
    /// ``openIDConnect`` as a set.
    public static let openIDConnectScopes = Set(openIDConnect)

    /// The scopes without the OpenID Connect ones (ignoring case), in order: what a token is for.
    public var resourceScopes: [String] {
        scopes.filter { !Self.openIDConnectScopes.contains($0.lowercased()) }
    }

    /// Whether the two sets share a resource scope (ignoring case and the OpenID Connect
    /// scopes, as MSAL does when it decides which access tokens a new one replaces).
    public func intersects(_ other: ScopeSet) -> Bool {
        !folded.subtracting(Self.openIDConnectScopes).isDisjoint(with: other.folded.subtracting(Self.openIDConnectScopes))
    }
}
