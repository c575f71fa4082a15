/// The parts of an absolute http(s) URL needed to validate and rebuild it.
public struct URLParts: Sendable, Equatable {
    public let scheme: String
    public let host: String
    public let port: Int?
    /// Everything after the authority: path, query and fragment.
    public let path: String

    public init?(_ text: String) {
        guard let schemeEnd = text.firstRange(of: "://") else { return nil }
        scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        path = String(rest.dropFirst(authority.count))
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        if authority.hasPrefix("[") {  // IPv6 literal
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close]).lowercased()
            let after = authority[authority.index(after: close)...]
            port = after.hasPrefix(":") ? Int(after.dropFirst()) : nil
            if !after.isEmpty && port == nil { return nil }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon]).lowercased()
            guard let p = Int(authority[authority.index(after: colon)...]), (0...65535).contains(p) else { return nil }
            port = p
        } else {
            host = authority.lowercased()
            port = nil
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "\\" }) else { return nil }
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
