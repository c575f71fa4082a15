import Adapters
import JSON
import Sidecar

/// The verbs' human-readable and JSON renderings (pure functions, unit-tested). None of them
/// ever includes a token.
enum VerbOutput {
    /// An account's username, else its home account ID.
    static func username(_ account: JSONValue?) -> String {
        account?["username"]?.stringValue ?? account?["homeAccountId"]?.stringValue ?? "(unknown account)"
    }

    /// What `login --output json` prints: the sign-in's result without its tokens.
    static func signInSummary(_ result: JSONValue) -> JSONValue {
        var summary = JSONObject()
        for key in ["account", "scopes", "expiresOn", "tenantId", "authority", "correlationId"] {
            summary[key] = result[key]
        }
        return .object(summary)
    }

    /// `accounts`: one line per account, `USERNAME  NAME  tenant TENANT` (`tenants T1, T2` when
    /// the cache holds tokens of several), then `(current)` on the current account.
    static func accountLines(_ accounts: [JSONValue]) -> [String] {
        accounts.map { account in
            var columns = [username(account)]
            if let name = account["name"]?.stringValue, !name.isEmpty { columns.append(name) }
            let listed = account["tenants"]?.arrayValue?.compactMap(\.stringValue) ?? []
            let tenants = listed.isEmpty ? [account["tenantId"]?.stringValue].compactMap { $0 }.filter { !$0.isEmpty } : listed
            if !tenants.isEmpty { columns.append((tenants.count > 1 ? "tenants " : "tenant ") + tenants.joined(separator: ", ")) }
            if account["isCurrent"]?.boolValue == true { columns.append("(current)") }
            return columns.joined(separator: "  ")
        }
    }

    /// `token --output az`: az's get-access-token JSON from a TokenResult (`tenant`: the
    /// result's tenantId). No `subscription`: the sidecar has no notion of one.
    static func az(_ result: TokenResponse) -> JSONValue {
        AzAccessToken.json(
            accessToken: result.accessToken, expiresOn: result.expiresOn, tenant: result.tenantId, tokenType: result.tokenType,
            subscription: nil)
    }

    /// "in 59 min", "in 2 h 5 min", "expired 3 min ago", from seconds left.
    static func lifetime(secondsLeft: Int64) -> String {
        let minutes = secondsLeft.magnitude / 60
        let text = minutes >= 60 ? "\(minutes / 60) h \(minutes % 60) min" : minutes > 0 ? "\(minutes) min" : "\(secondsLeft.magnitude) s"
        return secondsLeft >= 0 ? "expires in \(text)" : "expired \(text) ago"
    }

    /// `later - earlier` in seconds, saturated: the times come from outside (an agent's
    /// answer, the cache file, an assertion's `exp`) and may be anything, `Int64.min` too.
    static func seconds(from earlier: Int64, to later: Int64) -> Int64 {
        let (difference, overflow) = later.subtractingReportingOverflow(earlier)
        return overflow ? (later < earlier ? .min : .max) : difference
    }

    /// How long ago (`12 min ago`), or with `suffix` false how long (`2 h 5 min`).
    static func age(secondsAgo: Int64, suffix: Bool = true) -> String {
        let seconds = max(0, secondsAgo)
        let minutes = seconds / 60
        let text = minutes >= 60 ? "\(minutes / 60) h \(minutes % 60) min" : minutes > 0 ? "\(minutes) min" : "\(seconds) s"
        return suffix ? "\(text) ago" : text
    }
}
