import JSONRPC

/// Checks the URLs of a configuration: HTTPS everywhere except loopback hosts, and a
/// loopback `http` redirect URI.
enum ConfigurationValidator {
    static func validate(_ config: Configuration) throws(RPCError) {
        try requireSecure(config.authority, member: "authority")
        try requireSecure(config.graphEndpoint, member: "graphEndpoint")
        guard let redirect = SimpleURL(config.redirectUri), redirect.scheme == "http", redirect.isLoopback else {
            throw .invalidParams("redirectUri must be an http loopback URL such as http://localhost", member: "redirectUri")
        }
        if case .file(let path) = config.cache, !path.hasPrefix("/") {
            throw .invalidParams("cache.path must be an absolute path", member: "cache.path")
        }
        for host in config.knownAuthorities where host.isEmpty || host.contains("/") && SimpleURL(host) == nil {
            throw .invalidParams("knownAuthorities must list host names or URLs", member: "knownAuthorities")
        }
    }

    private static func requireSecure(_ text: String, member: String) throws(RPCError) {
        guard let url = SimpleURL(text) else {
            throw .invalidParams("\(member) must be an absolute URL, not '\(text)'", member: member)
        }
        guard url.scheme == "https" || (url.scheme == "http" && url.isLoopback) else {
            throw .invalidParams("\(member) must use https (http is allowed only for loopback hosts)", member: member)
        }
    }
}

/// The parts of an absolute URL needed to validate it: scheme, host, port, path.
struct SimpleURL: Equatable {
    let scheme: String
    let host: String
    let port: Int?
    let path: String

    init?(_ text: String) {
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
    var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.") && host.split(separator: ".").count == 4
    }
}
