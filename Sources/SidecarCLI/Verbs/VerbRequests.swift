import AuthSeams

/// Small rules the verbs apply to their arguments before a request.
enum VerbRequests {
    /// Why `tenant`, given with `option` (`--tenant`, `tenantId`), is not a tenant
    /// (``TenantName``, the one rule); `nil` when it is one.
    static func tenantProblem(_ tenant: String, option: String) -> String? {
        TenantName.problem(tenant).map { "\(option): \($0)" }
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
