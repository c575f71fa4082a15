import JSON
import JSONRPC
import Sidecar

/// What `status` shows: who is signed in and until when (each cached access token's scopes and
/// minutes left, a refresh token or not, the last failed refresh), the configuration in force
/// and where it came from, the cache and its key, and the agent. Never a token or a secret (the
/// configuration holds none; a cache key file appears by path only).
///
/// The text is sections of `label: value` lines (``identityLines``, ``tokenLines``,
/// ``cacheLines``, ``agentLines``): a new fact is one more line in its section.
struct StatusReport {
    /// One account's token for the configured scopes.
    enum TokenState: Equatable {
        case valid(expiresOn: Int64)
        case signInNeeded(String)
        case failed(String)
    }

    struct AccountStatus {
        var account: JSONValue
        var current: Bool
        var token: TokenState
    }

    var configuration: JSONValue
    /// `initialize`'s `cacheProtection` (`nil`: a memory cache).
    var cacheProtection: JSONValue?
    var origins: [String]
    var engine: EngineConnection.Engine
    var agentSocket: String
    var agentState: EngineConnection.AgentState
    /// `initialize`'s `agent` (pid, startedAt, connections; forwarding) when an agent serves
    /// this session.
    var agentInfo: JSONValue?
    var accounts: [AccountStatus]
    /// The file cache read here (`nil`: a memory cache).
    var cache: Result<CacheSummary, RPCError>?
    /// The configuration file's profile in force (`nil`: a flat file or none).
    var profile: String?
    /// How many accounts `login --import` would bring (looked for when there is none).
    var importable = 0
    /// The import sources that exist but were refused or could not be read (a FIFO, a link,
    /// another user's file), one line each.
    var importProblems: [String] = []
    /// The SSH certificates the agent keeps (``SSHCertificateStatus``).
    var sshCertificates: [SSHKeyFiles.Kept] = []

    /// The current account has a token (or can get one silently).
    var signedIn: Bool {
        accounts.contains { $0.current && { if case .valid = $0.token { true } else { false } }($0) }
    }

    /// The stderr line when ``signedIn`` is false.
    var signInAdvice: String {
        if configuration["clientAssertion"] != nil {
            return "the app gets no token now (a sign-in cannot help): see the assertion and last refresh lines"
        }
        if accounts.isEmpty { return "no account is signed in; \(nextStep)" }
        return "a sign-in is needed; run 'auth-sidecar login'"
    }

    /// With no account: `login --import` when another tool's sign-ins can be imported, else `login`.
    private var nextStep: String {
        importable > 0
            ? "\(importable) account\(importable == 1 ? "" : "s") can be imported: auth-sidecar login --import"
            : "run 'auth-sidecar login'"
    }

    private var summary: CacheSummary? { try? cache?.get() }

    var json: JSONValue {
        var object: JSONObject = [
            "signedIn": .bool(signedIn),
            "profile": JSONValue(profile),
            "configuration": configuration,
            "configurationSources": JSONValue(origins),
            "cacheProtection": cacheProtection ?? .null,
            "engine": engine == .agent ? "agent" : "inProcess",
            "agent": agentJSON,
            "accounts": .array(accounts.map(accountJSON)),
            "lastRefreshError": summary?.lastRefreshError.map(JSONValue.object) ?? .null,
            "clientAssertion": summary?.clientAssertion.map(JSONValue.object) ?? .null,
            "importableAccounts": .int(Int64(importable)),
            "importProblems": JSONValue(importProblems),
        ]
        if case .failure(let error)? = cache { object["cacheError"] = .string(VerbFailure.oneLine(error.message)) }
        object["sshCertificates"] = SSHCertificateStatus.json(sshCertificates)
        return .object(object)
    }

    private var agentJSON: JSONValue {
        var agent: JSONObject = ["socket": .string(agentSocket), "state": .string(agentStateName), "detail": JSONValue(agentDetail)]
        for key in ["pid", "startedAt", "connections", "engines", "forwarded", "forwardSocket", "forwardedSessions"] { agent[key] = agentInfo?[key] }
        return .object(agent)
    }

    private func accountJSON(_ status: AccountStatus) -> JSONValue {
        var token: JSONObject = [:]
        switch status.token {
        case .valid(let expiresOn): token = ["state": "valid", "expiresOn": .int(expiresOn)]
        case .signInNeeded(let reason): token = ["state": "signInNeeded", "detail": .string(reason)]
        case .failed(let reason): token = ["state": "error", "detail": .string(reason)]
        }
        var object: JSONObject = ["account": status.account, "current": .bool(status.current), "token": .object(token)]
        if let summary, let home = status.account["homeAccountId"]?.stringValue {
            object["accessTokens"] = .array(
                summary.accessTokens.filter { $0.homeAccountId == home }.map {
                    ["scopes": JSONValue($0.scopes), "tenant": .string($0.tenant), "expiresOn": .int($0.expiresOn)]
                })
            object["refreshToken"] = .bool(summary.refreshTokenAccounts.contains(home))
        }
        return .object(object)
    }

    func text(now: Int64) -> String {
        let sections = [
            identityLines(now: now), tokenLines(now: now), configurationLines, cacheLines, agentLines(now: now),
            SSHCertificateStatus.lines(sshCertificates, now: now).map { Self.line($0.label, $0.value) },
        ]
        return sections.flatMap { $0 }.joined(separator: "\n")
    }

    /// `label:` padded to one column.
    private static func line(_ label: String, _ value: String) -> String {
        let head = label.isEmpty ? "" : label + ":"
        return head + String(repeating: " ", count: max(1, 12 - head.count)) + value
    }

    /// The profile (when the configuration has them) and the accounts with their tenants.
    private func identityLines(now: Int64) -> [String] {
        var lines: [String] = []
        if let profile { lines.append(Self.line("profile", profile)) }
        if accounts.isEmpty { lines.append(Self.line("account", "none signed in; \(nextStep)")) }
        for (index, problem) in importProblems.enumerated() { lines.append(Self.line(index == 0 ? "import" : "", problem)) }
        for (index, status) in accounts.enumerated() {
            let tenants = status.account["tenants"]?.arrayValue?.compactMap(\.stringValue) ?? []
            let tenant = tenants.isEmpty ? (status.account["tenantId"]?.stringValue ?? "-") : tenants.joined(separator: ", ")
            let state: String =
                switch status.token {
                case .valid(let expiresOn):
                    "token \(VerbOutput.lifetime(secondsLeft: VerbOutput.seconds(from: now, to: expiresOn))), tenant \(tenant)"
                case .signInNeeded: "sign-in needed, tenant \(tenant)"
                case .failed(let reason): "tenant \(tenant), error: \(reason)"
                }
            let who = VerbOutput.username(status.account) + (status.current ? " (current)" : "")
            lines.append(Self.line(index == 0 ? "account" : "", "\(who), \(state)"))
        }
        if let assertion = summary?.clientAssertion { lines.append(Self.line("assertion", Self.assertionText(assertion, now: now))) }
        return lines
    }

    /// Each cached access token's scopes and minutes left, the refresh token, the last failed refresh.
    private func tokenLines(now: Int64) -> [String] {
        guard let cache else {
            let forwarded = agentInfo?["forwarded"]?.boolValue == true
            return [Self.line("tokens", forwarded ? "kept by the forwarding agent (not shown)" : "in memory only (not shown)")]
        }
        guard case .success(let summary) = cache else {
            if case .failure(let error) = cache { return [Self.line("tokens", "cannot read the cache: \(VerbFailure.oneLine(error.message))")] }
            return []
        }
        var lines: [String] = []
        for status in accounts {
            guard let home = status.account["homeAccountId"]?.stringValue else { continue }
            let name = VerbOutput.username(status.account)
            for token in summary.accessTokens where token.homeAccountId == home {
                let left = VerbOutput.seconds(from: now, to: token.expiresOn)
                let minutes = left > 0 ? "\(left / 60) min left" : "expired"
                lines.append(
                    Self.line(lines.isEmpty ? "tokens" : "", "\(name): \(token.scopes.joined(separator: " ")) (tenant \(token.tenant)), \(minutes)"))
            }
            guard !home.isEmpty else { continue }  // an app: no refresh token, none needed
            let refresh = summary.refreshTokenAccounts.contains(home) ? "present" : "none (a sign-in will be needed)"
            lines.append(Self.line(lines.isEmpty ? "tokens" : "", "\(name): refresh token \(refresh)"))
        }
        if let failure = summary.lastRefreshError {
            let age = failure["at"]?.intValue.map { " \(VerbOutput.age(secondsAgo: VerbOutput.seconds(from: $0, to: now)))" } ?? ""
            let who = failure["username"]?.stringValue.map { " for \($0)" } ?? ""
            let what = VerbFailure.oneLine(failure["message"]?.stringValue ?? "-")
            lines.append(Self.line("last refresh", "failed\(age)\(who): \(what) (\(failure["error"]?.stringValue ?? "error"))"))
        } else {
            lines.append(Self.line("last refresh", "no failure recorded"))
        }
        return lines
    }

    /// An app's assertion source and when the assertion it gives now expires (never its value).
    static func assertionText(_ assertion: JSONObject, now: Int64) -> String {
        let source = assertion["source"]?.stringValue ?? "-"
        if let reason = assertion["error"]?.stringValue { return "\(source), gives none now: \(VerbFailure.oneLine(reason))" }
        guard let expiresOn = assertion["expiresOn"]?.intValue else { return "\(source), expiry unknown" }
        let left = VerbOutput.seconds(from: now, to: expiresOn)
        return "\(source), current one " + (left > 0 ? "expires in \(left) s" : "expired \(left.magnitude) s ago") + " (read again at each exchange)"
    }

    private var configurationLines: [String] {
        [
            Self.line("client id", configuration["clientId"]?.stringValue ?? "-"),
            Self.line("authority", configuration["authority"]?.stringValue ?? "-"),
            Self.line("scopes", configuration["scopes"]?.arrayValue?.compactMap(\.stringValue).joined(separator: " ") ?? "-"),
            Self.line("redirect", configuration["redirectUri"]?.stringValue ?? "-"),
            Self.line("from", origins.isEmpty ? "defaults" : origins.joined(separator: ", ")),
        ]
    }

    /// Where the cache and its key live (the key layers' reasons in `key store`).
    private var cacheLines: [String] {
        let cacheText: String =
            if let path = configuration["cache"]?["path"]?.stringValue { "\(path) \(protectionText)" } else { "in memory only" }
        return [Self.line("cache", cacheText), Self.line("key store", keyStoreText)]
    }

    /// Whether an agent serves this user, since when, with how many clients.
    private func agentLines(now: Int64) -> [String] {
        var state = agentDetail.map { "\(agentStateName): \($0)" } ?? agentStateName
        if let info = agentInfo {
            let since =
                info["startedAt"]?.intValue.map { ", up \(VerbOutput.age(secondsAgo: VerbOutput.seconds(from: $0, to: now), suffix: false))" } ?? ""
            let others = info["connections"]?.intValue.map { ", \(max(0, $0 &- 1)) other client\($0 == 2 ? "" : "s")" } ?? ""
            let pid = info["pid"]?.intValue.map { ", pid \($0)" } ?? ""
            state += "\(pid)\(since)\(others)"
        }
        var lines = [
            Self.line("agent", "\(agentSocket) (\(state))"),
            Self.line("engine", engine == .agent ? "the agent" : "in this process"),
        ]
        if let forwardingText { lines.append(Self.line("forwarded", forwardingText)) }
        return lines
    }

    /// Whether the file is encrypted, and by which layer's key.
    private var protectionText: String {
        let layer = cacheProtection?["layer"]?.stringValue
        let onDisk: String =
            switch cacheProtection?["encrypted"] {
            case .bool(true)?: "(encrypted)"
            case .bool(false)?: "(not encrypted)"
            default: "(no file yet)"
            }
        guard let layer, layer != "plaintext" else { return "\(onDisk), plaintext chosen: cacheProtection \"plaintext\"" }
        var text = "\(onDisk), key in \(Self.layerNames[layer] ?? layer)"
        if let seconds = cacheProtection?["keyCopySeconds"]?.intValue {
            text += " (kept in the kernel keyring for \(Self.minutes(Int(seconds))))"
        }
        if layer == "keyFile", let file = configuration["cache"]?["encryption"]?["keyFile"]?.stringValue { text += " \(file)" }
        if let aside = cacheProtection?["setAside"]?.stringValue {
            text += "; a cache the new key cannot open (a reboot cleared the keyring) was set aside as \(aside): sign in again"
        }
        return text
    }

    /// The layers skipped before the one in use, and why.
    private var keyStoreText: String {
        let setting = cacheProtection?["setting"]?.stringValue ?? "-"
        let skipped = (cacheProtection?["skipped"]?.arrayValue ?? []).compactMap { skip -> String? in
            guard let layer = skip["layer"]?.stringValue, let reason = skip["reason"]?.stringValue else { return nil }
            return "\(layer) skipped: \(reason)"
        }
        return (["cacheProtection \(setting)"] + skipped).joined(separator: "; ")
    }

    /// `seconds` as whole minutes ("10 min"), or seconds when under a minute or not whole.
    private static func minutes(_ seconds: Int) -> String {
        seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }

    private static let layerNames = [
        "secretService": "the Secret Service", "keyring": "the kernel keyring (persistent, this user)",
        "keyFile": "the key file", "keyCommand": "the key command's output",
    ]

    /// A forwarded agent (which says nothing about its machine), or the forward socket's sessions.
    private var forwardingText: String? {
        guard let forwarding = agentInfo else { return nil }
        if forwarding["forwarded"]?.boolValue == true {
            return "forwarded agent (tokens for its forwardScopes only)"
        }
        guard let socket = forwarding["forwardSocket"]?.stringValue else { return nil }
        let sessions = forwarding["forwardedSessions"]?.arrayValue ?? []
        guard let first = sessions.first else { return "no forwarded sessions on \(socket)" }
        return "\(sessions.count) forwarded session\(sessions.count == 1 ? "" : "s") on \(socket), the first since "
            + "\(first["since"]?.stringValue ?? "?") (\(first["peer"]?.stringValue ?? "?"))"
    }

    private var agentStateName: String {
        switch agentState {
        case .running: "running"
        case .notRunning: "not running"
        case .refused: "refused"
        case .notTried: "not used (--no-agent)"
        }
    }

    private var agentDetail: String? {
        if case .refused(let reason) = agentState { return reason }
        return nil
    }
}
