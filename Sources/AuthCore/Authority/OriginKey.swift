import AuthSeams

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
