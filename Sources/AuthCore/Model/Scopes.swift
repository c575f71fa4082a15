import JSON
import TokenCache

/// The scope rules of the flows, over the one scope model, ``ScopeSet`` (case-insensitive,
/// duplicates removed, the OpenID Connect scopes named once, in TokenCache).
public enum Scopes {
    /// `scopes` plus the OpenID Connect ones, without duplicates (ignoring case), in order.
    public static func decorated(_ scopes: [String]) -> [String] {
        deduplicated(scopes + ScopeSet.openIDConnect)
    }

    /// The scopes a request is for: `requested` when it names a resource scope, else the
    /// configured `defaults`. An absent list, an empty one, `[""]` and a list of OpenID Connect
    /// scopes alone (`["openid"]`, `["profile"]`) say nothing about a resource, so they mean the
    /// default scopes, never "any cached token" (the cache's lookup takes every token whose
    /// scopes include the requested ones, and every token includes none). The one home of the
    /// rule, for every flow and every door (stdio, agent, verbs, the az shim, Graph).
    public static func requested(_ requested: [String]?, defaults: [String]) -> [String] {
        if let requested {
            let given = ScopeSet(requested)
            if !given.resourceScopes.isEmpty { return given.scopes }
        }
        return deduplicated(defaults)
    }

    /// `scopes` without empty strings and duplicates (ignoring case), in order.
    public static func deduplicated(_ scopes: [String]) -> [String] {
        ScopeSet(scopes).scopes
    }

    /// The scopes a token response granted: its `scope` (else what was requested), plus the
    /// client id when that was requested (B2C's idiom for a token for the app itself, which
    /// the service does not echo; MSAL accepts it), plus a requested `RESOURCE/.default`
    /// (the service answers it with the resource's consented scopes, never `.default` itself,
    /// and cannot decline it; kept, the cached token serves the next `.default` request
    /// instead of a refresh each time, e.g. for git, kubectl and the managed-identity endpoint).
    public static func granted(_ scope: [String]?, requested: [String], clientId: String) -> [String] {
        guard let scope else { return requested }
        let own = requested.filter { $0.lowercased() == clientId.lowercased() || $0.lowercased().hasSuffix("/.default") }
        return deduplicated(scope + own)
    }

    /// The requested scopes the service did not grant (reserved ones and case ignored).
    /// A granted `.default` scope of a resource covers that resource's scopes.
    public static func declined(requested: [String], granted: [String]) -> [String] {
        let grantedSet = Set(granted.map { $0.lowercased() })
        return requested.filter { scope in
            let lower = scope.lowercased()
            return !ScopeSet.openIDConnectScopes.contains(lower) && !grantedSet.contains(lower) && !lower.hasSuffix("/.default")
                && !grantedSet.contains(where: { lower.hasPrefix($0.replacingSuffix("/.default", with: "/")) && $0.hasSuffix("/.default") })
        }
    }

    /// Merges a request's `claims` JSON with the client capabilities (`xms_cc`), as MSAL does.
    public static func mergedClaims(_ claims: String?, capabilities: [String]) throws(AuthError) -> String? {
        var object: JSONObject = [:]
        if let claims, !claims.isEmpty {
            guard let parsed = (try? JSONValue.parse(claims))?.objectValue else {
                throw AuthError(.invalidConfiguration, "claims must be a JSON object")
            }
            object = parsed
        }
        if !capabilities.isEmpty {
            var accessToken = object["access_token"]?.objectValue ?? [:]
            accessToken["xms_cc"] = ["values": JSONValue(capabilities)]
            object["access_token"] = .object(accessToken)
        }
        return object.isEmpty ? nil : JSONValue.object(object).jsonText
    }
}

extension String {
    func replacingSuffix(_ suffix: String, with replacement: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) + replacement : self
    }
}
