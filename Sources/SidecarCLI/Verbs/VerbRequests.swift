/// Small rules the verbs apply to their arguments before a request.
enum VerbRequests {
    /// `tenant` can be one path segment of an authority: not empty, no `/`, `?`, `#`, `%`,
    /// spaces or control characters.
    static func isTenant(_ tenant: String) -> Bool {
        !tenant.isEmpty && !tenant.unicodeScalars.contains { "/?#% \\".unicodeScalars.contains($0) || $0.value < 0x21 || $0.value == 0x7F }
    }

    /// The authority for `tenant`: the configured authority's origin (`scheme://host[:port]`)
    /// followed by `/tenant`; nil when `configured` has no origin.
    static func authority(_ configured: String, tenant: String) -> String? {
        guard let schemeEnd = configured.firstRange(of: "://") else { return nil }
        let rest = configured[schemeEnd.upperBound...]
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty else { return nil }
        return configured[..<schemeEnd.upperBound] + host + "/" + tenant
    }
}
