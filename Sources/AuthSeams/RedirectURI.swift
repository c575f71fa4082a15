/// A loopback redirect URI, `http://localhost[:port][/path]` (or `127.0.0.1`), parsed.
///
/// Only plain `http` on the IPv4 loopback is served: the listener binds 127.0.0.1, so
/// `[::1]` (which would need an IPv6 socket) and any other host are refused, as are
/// user info, a query and a fragment (RFC 8252 §7.3 loopback redirects need none).
///
/// The one rule for the redirect URI: configuration validation (`initialize`) and the
/// listener both parse with this type, so a URI that is accepted is one that can be served.
public struct RedirectURI: Sendable, Equatable {
    /// The host as written (`localhost` or `127.0.0.1`).
    public var host: String
    /// The configured port, or nil for "any free port" (no port, or port 0).
    public var port: UInt16?
    /// The path as written (percent-encoded), possibly empty.
    public var path: String

    /// The request path the listener accepts: the path, or `/` when it is empty.
    public var requestPath: String { path.isEmpty ? "/" : path }

    /// The URI to send to the authorize endpoint once bound to `boundPort`.
    public func concrete(boundPort: UInt16) -> String {
        "http://\(host):\(boundPort)\(path)"
    }

    /// Parses and validates `uri`; throws `LoopbackError.invalidRedirectURI`.
    public init(parsing uri: String) throws(LoopbackError) {
        func invalid(_ reason: String) -> LoopbackError { .invalidRedirectURI("\(reason): \(uri)") }
        let scheme = "http://"
        guard uri.count > scheme.count, uri.prefix(scheme.count).lowercased() == scheme else {
            throw invalid("the loopback redirect URI must start with http://")
        }
        let rest = uri.dropFirst(scheme.count)
        guard !rest.contains(where: { $0 == "?" || $0 == "#" }) else {
            throw invalid("query and fragment are not allowed")
        }
        guard !rest.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7F }) else {
            throw invalid("spaces, controls and non-ASCII characters are not allowed")
        }
        let authority = rest.prefix { $0 != "/" }
        path = String(rest.dropFirst(authority.count))
        guard !authority.contains("@") else { throw invalid("user info is not allowed") }

        var hostPart = Substring(authority)
        var portPart: Substring?
        if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        let lowered = hostPart.lowercased()
        guard lowered == "localhost" || lowered == "127.0.0.1" else {
            throw invalid("the host must be localhost or 127.0.0.1")
        }
        host = String(hostPart)
        if let portPart {
            guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(portPart), value <= 65_535
            else {
                throw invalid("invalid port")
            }
            port = value == 0 ? nil : UInt16(value)
        } else {
            port = nil
        }
    }
}
