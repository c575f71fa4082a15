/// Which container registries the Docker credential helper answers: Azure Container Registry
/// login servers (`NAME.azurecr.io`, `.azurecr.cn`, `.azurecr.us`) on the default port, and
/// the configured `containerRegistries` (`host[:port]`, exactly). A token is never sent to any
/// other host.
public struct ContainerRegistries: Sendable, Equatable {
    /// ACR's login-server suffixes in the Azure clouds.
    public static let acrSuffixes = [".azurecr.io", ".azurecr.cn", ".azurecr.us"]

    /// The configured registries, lower-cased.
    public let configured: Set<String>

    public init(_ configured: [String] = []) {
        self.configured = Set(configured.map { $0.lowercased() })
    }

    /// Why a `containerRegistries` list is refused, if it is: an entry that is not host[:port].
    public static func problem(_ configured: [String]) -> String? {
        for entry in configured where Self.authority(entry) != entry.lowercased() || entry.isEmpty {
            return "containerRegistries: \(entry) is not a registry's host[:port]"
        }
        return nil
    }

    /// The registry (host[:port], lower-cased) a docker server URL names (`NAME.azurecr.io`,
    /// `https://NAME.azurecr.io`, `https://NAME.azurecr.io/v2/`), when it is one of ours; `nil`
    /// otherwise, and for any `http://` URL.
    public func registry(forServerURL serverURL: String) -> String? {
        guard let authority = Self.authority(serverURL) else { return nil }
        if configured.contains(authority) { return authority }
        let host = authority.hasSuffix(":443") ? String(authority.dropLast(4)) : authority
        guard !host.contains(":") else { return nil }
        for suffix in Self.acrSuffixes where host.hasSuffix(suffix) {
            let name = host.dropLast(suffix.count)
            if !name.isEmpty, !name.contains("."), name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) { return host }
        }
        return nil
    }

    /// The authority of a server URL or host[:port], lower-cased; `nil` for a scheme other than
    /// https, user info, or characters no host has.
    static func authority(_ serverURL: String) -> String? {
        var rest = Substring(serverURL.trimmingWhitespace)
        if let range = rest.firstRange(of: "://") {
            guard rest[..<range.lowerBound].lowercased() == "https" else { return nil }
            rest = rest[range.upperBound...]
        }
        let authority = rest.prefix { $0 != "/" }
        guard !authority.isEmpty, authority.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || "-.:[]".contains($0) })
        else { return nil }
        return authority.lowercased()
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line ends.
    fileprivate var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
