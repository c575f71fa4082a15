import AuthSeams

/// An origin: scheme, host and the port in use (443 for https, 80 for http, when none is
/// named). Trust compares origins, and the cache names them (``environment``): a token
/// obtained at one origin is never sent to, or returned for, another.
struct OriginKey: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int
    let isLoopback: Bool

    /// https on 443.
    var hasDefaultPort: Bool { scheme == "https" && port == 443 }
    var description: String { "\(bracketedHost):\(port)" }

    /// The cache's `environment` for this origin: the host for https on the default port
    /// (MSAL's key, so caches move between MSAL SDKs), else `host:port` (MSAL.js's
    /// `hostnameAndPort`), so two ports of one host never share a token. An http origin always
    /// names its port.
    var environment: String { hasDefaultPort ? host : "\(bracketedHost):\(port)" }

    private var bracketedHost: String { host.contains(":") ? "[\(host)]" : host }

    init(_ parts: URLParts) {
        scheme = parts.scheme
        host = parts.host
        port = parts.port ?? (parts.scheme == "http" ? 80 : 443)
        isLoopback = parts.isLoopback
    }

    init(authority: Authority) {
        scheme = authority.scheme
        host = authority.host
        port = authority.port ?? (authority.scheme == "http" ? 80 : 443)
        isLoopback = authority.isLoopback
    }

    /// A `knownAuthorities` entry: a URL, `host:port` or a host (https unless the URL says http).
    init?(entry: String) {
        guard let parts = URLParts(Self.namesScheme(entry) ? entry : "https://" + entry) else { return nil }
        self.init(parts)
    }

    /// Whether `entry` holds `://` (found on its bytes: `String.contains` is the string
    /// processing library's searcher, whose code a fresh process otherwise never touches).
    private static func namesScheme(_ entry: String) -> Bool {
        let bytes = Array(entry.utf8)
        let separator = Array("://".utf8)
        return bytes.indices.dropLast(2).contains { bytes[$0..<$0 + 3].elementsEqual(separator) }
    }
}
