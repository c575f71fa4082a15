/// The parts of an absolute http(s) URL needed to validate and rebuild it.
public struct URLParts: Sendable, Equatable {
    public let scheme: String
    public let host: String
    public let port: Int?
    /// Everything after the authority: path, query and fragment.
    public let path: String

    /// Parsed on the UTF-8 bytes (every delimiter is ASCII): the Character view's grapheme
    /// breaking made the ~10 URLs a fresh process checks cost more than its reply.
    public init?(_ text: String) {
        // The first `:` must start `://`: a scheme has no colon (and must be http or https).
        guard let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")), text.utf8[colon...].starts(with: "://".utf8)
        else { return nil }
        scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = text[text.utf8.index(colon, offsetBy: 3)...]
        let authorityEnd = rest.utf8.firstIndex { Self.endsAuthority($0) } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        path = String(rest[authorityEnd...])
        guard !authority.isEmpty, !authority.utf8.contains(UInt8(ascii: "@")) else { return nil }
        if authority.utf8.first == UInt8(ascii: "[") {  // IPv6 literal
            guard let close = authority.utf8.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = String(authority[authority.utf8.index(after: authority.startIndex)..<close]).lowercased()
            let after = authority[authority.utf8.index(after: close)...]
            port = after.utf8.first == UInt8(ascii: ":") ? Int(after[after.utf8.index(after: after.startIndex)...]) : nil
            if !after.isEmpty && port == nil { return nil }
        } else if let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")) {
            host = String(authority[..<colon]).lowercased()
            guard let p = Int(authority[authority.utf8.index(after: colon)...]), (0...65535).contains(p) else { return nil }
            port = p
        } else {
            host = authority.lowercased()
            port = nil
        }
        guard !host.isEmpty, !host.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\\") }) else {
            return nil
        }
    }

    /// `/`, `?` or `#`: where the authority of a URL ends.
    private static func endsAuthority(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    /// `localhost`, 127.0.0.0/8 or `::1`.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.") && host.split(separator: ".").count == 4
    }
}

extension URLParts {
    /// HTTPS, or HTTP to a loopback host: the only URLs the sidecar sends requests to.
    public var isSecureOrLoopback: Bool { scheme == "https" || (scheme == "http" && isLoopback) }

    /// `scheme://host[:port]`.
    public var origin: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(hostPart)\(port.map { ":\($0)" } ?? "")"
    }
}
