/// Which Python package feeds get a token from the `keyring` name, and for which scope: Azure
/// Artifacts (`https://pkgs.dev.azure.com/...`, `https://ORG.pkgs.visualstudio.com/...`) for
/// Azure DevOps, and the configured `packageFeeds` (`{"URL prefix": "scope"}`, the longest
/// prefix wins). Only https: a token never goes to a plaintext URL.
public struct PackageFeeds: Sendable, Equatable {
    /// Azure DevOps' resource, as Azure Artifacts wants it.
    public static let azureDevOpsScope = GitCredentialHosts.azureDevOpsScope

    /// The configured prefixes (normalized: scheme and host lower-cased) and their scopes.
    public let prefixes: [(prefix: String, scope: String)]

    public static func == (lhs: PackageFeeds, rhs: PackageFeeds) -> Bool {
        lhs.prefixes.elementsEqual(rhs.prefixes) { $0.prefix == $1.prefix && $0.scope == $1.scope }
    }

    /// - Parameter configured: `packageFeeds` (prefixes that are not https URLs with a host are
    ///   left out; ``problem(_:)`` names them when the configuration is read).
    public init(_ configured: [String: String] = [:]) {
        prefixes = configured.compactMap { prefix, scope in
            FeedURL(prefix).map { (prefix: $0.text, scope: scope) }
        }.sorted { $0.prefix.utf8.count > $1.prefix.utf8.count }
    }

    /// Why a `packageFeeds` map is refused, if it is: a prefix that is not an https URL with a
    /// host, or an empty scope.
    public static func problem(_ configured: [String: String]) -> String? {
        for (prefix, scope) in configured.sorted(by: { $0.key < $1.key }) {
            guard FeedURL(prefix) != nil, prefix.lowercased().hasPrefix("https://") else {
                return "packageFeeds: \(prefix) is not an https URL with a host"
            }
            if scope.isEmpty { return "packageFeeds: the scope for \(prefix) is empty" }
        }
        return nil
    }

    /// The scope whose token answers `service` (what pip and uv pass `keyring get`: the index
    /// URL, a file's URL, or the host[:port] alone), or `nil`: not a feed of ours.
    public func scope(forService service: String) -> String? {
        guard let url = FeedURL(service) else { return nil }
        if url.isAzureArtifacts { return Self.azureDevOpsScope }
        if url.hostOnly {
            // pip and uv ask for the host alone after the URL: the longest prefix on that host
            return prefixes.first { FeedURL($0.prefix)?.authority == url.authority }?.scope
        }
        return prefixes.first { url.text.hasPrefix($0.prefix) && url.continues(after: $0.prefix) }?.scope
    }
}

/// An https URL (or a bare host[:port]) as the feed rules read it: user info dropped, scheme
/// and authority lower-cased, the path kept as given.
struct FeedURL {
    /// `https://authority/path`.
    let text: String
    let authority: String
    /// Given as host[:port] alone.
    let hostOnly: Bool

    init?(_ given: String) {
        var rest = Substring(given)
        let hostOnly: Bool
        if let range = given.firstRange(of: "://") {
            guard given[..<range.lowerBound].lowercased() == "https" else { return nil }
            rest = given[range.upperBound...]
            hostOnly = false
        } else {
            hostOnly = !given.contains("/")
        }
        let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<end]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        guard !authority.isEmpty, authority.allSatisfy({ $0.isLetter || $0.isNumber || "-.:[]".contains($0) }) else { return nil }
        self.authority = authority.lowercased()
        self.hostOnly = hostOnly
        text = "https://" + self.authority + rest[end...]
    }

    /// The host without a port.
    var host: String {
        if authority.hasPrefix("[") { return String(authority.prefix { $0 != "]" }) + "]" }
        return String(authority.prefix { $0 != ":" })
    }

    /// An Azure Artifacts host on the default port.
    var isAzureArtifacts: Bool {
        guard authority == host || authority == host + ":443" else { return false }
        return host == "pkgs.dev.azure.com" || (host.hasSuffix(".pkgs.visualstudio.com") && host.count > ".pkgs.visualstudio.com".count)
    }

    /// Whether this URL, which starts with `prefix`, goes on at a boundary (the prefix ends in
    /// `/`, or the URL ends or goes on with `/`, `?` or `#`): `https://host/feed` does not name
    /// `https://host/feed2` nor `https://host.evil`.
    func continues(after prefix: String) -> Bool {
        if prefix.hasSuffix("/") { return true }
        guard let next = text.utf8.dropFirst(prefix.utf8.count).first else { return true }
        return next == UInt8(ascii: "/") || next == UInt8(ascii: "?") || next == UInt8(ascii: "#")
    }
}
