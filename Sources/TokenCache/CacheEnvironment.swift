/// The one rule for comparing and keying a cache entry's `environment`.
///
/// An environment names an origin, and for a generic OpenID provider the issuer's path:
/// `login.microsoftonline.com` (MSAL's form, https on the default port), `127.0.0.1:8443` (another
/// port), `idp.example/realms/Team` (an issuer). The host part (up to the first `/`) compares
/// ignoring case, as MSAL does; the path compares exactly, since paths are case-sensitive
/// (Keycloak's realms `/realms/Team` and `/realms/team` are two issuers).
public enum CacheEnvironment {
    /// Whether `a` and `b` name the same origin (and issuer path).
    public static func same(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        let (hostA, pathA) = split(a)
        let (hostB, pathB) = split(b)
        return pathA == pathB && hostA.lowercased() == hostB.lowercased()
    }

    /// `environment` as it goes into a cache key: the host part lower-cased (as every MSAL
    /// key is), the path as it is.
    public static func keyForm(_ environment: String) -> String {
        let (host, path) = split(environment)
        return host.lowercased() + path
    }

    private static func split(_ environment: String) -> (host: Substring, path: Substring) {
        let slash = environment.firstIndex(of: "/") ?? environment.endIndex
        return (environment[..<slash], environment[slash...])
    }
}

extension Sequence where Element == String {
    /// Whether one of these environments is the same as `environment` (``CacheEnvironment/same(_:_:)``).
    ///
    /// Inlinable, so callers in other modules get it specialized: unspecialized, `contains(where:)`
    /// looked the sequence's iterator type up at run time (demangling it) on a fresh process's
    /// first silent request.
    @inlinable
    public func containsEnvironment(_ environment: String) -> Bool {
        contains { CacheEnvironment.same($0, environment) }
    }
}
