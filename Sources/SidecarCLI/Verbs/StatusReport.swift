import JSON

/// What `status` shows: the configuration in force and where it came from, the agent, and
/// each account with the lifetime of its token for the configured scopes. Never a token or a
/// secret (the configuration holds none; a cache key file appears by path only).
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
    /// `initialize`'s `agent` member: a forwarded agent and its host, or the forward socket
    /// and its sessions (`nil`: no agent).
    var forwarding: JSONValue? = nil
    var accounts: [AccountStatus]

    var json: JSONValue {
        [
            "configuration": configuration,
            "configurationSources": JSONValue(origins),
            "cacheProtection": cacheProtection ?? .null,
            "engine": engine == .agent ? "agent" : "inProcess",
            "agent": ["socket": .string(agentSocket), "state": .string(agentStateName), "detail": JSONValue(agentDetail)],
            "forwarding": forwarding ?? .null,
            "accounts": .array(
                accounts.map { status in
                    var token: JSONObject = [:]
                    switch status.token {
                    case .valid(let expiresOn): token = ["state": "valid", "expiresOn": .int(expiresOn)]
                    case .signInNeeded(let reason): token = ["state": "signInNeeded", "detail": .string(reason)]
                    case .failed(let reason): token = ["state": "error", "detail": .string(reason)]
                    }
                    return ["account": status.account, "current": .bool(status.current), "token": .object(token)]
                }),
        ]
    }

    func text(now: Int64) -> String {
        let cacheText: String =
            if let path = configuration["cache"]?["path"]?.stringValue { "\(path) \(protectionText)" } else { "in memory only" }
        var lines = [
            "client id:  \(configuration["clientId"]?.stringValue ?? "-")",
            "authority:  \(configuration["authority"]?.stringValue ?? "-")",
            "scopes:     \(configuration["scopes"]?.arrayValue?.compactMap(\.stringValue).joined(separator: " ") ?? "-")",
            "cache:      \(cacheText)",
            "key store:  \(keyStoreText)",
            "from:       \(origins.isEmpty ? "defaults" : origins.joined(separator: ", "))",
            "agent:      \(agentSocket) (\(agentDetail.map { "\(agentStateName): \($0)" } ?? agentStateName))",
            "engine:     \(engine == .agent ? "the agent" : "in this process")",
        ]
        if let forwardingText { lines.append("forwarded:  \(forwardingText)") }
        if accounts.isEmpty { lines.append("accounts:   none; run 'auth-sidecar login'") }
        for (index, status) in accounts.enumerated() {
            let label = index == 0 ? "accounts:   " : "            "
            let token: String =
                switch status.token {
                case .valid(let expiresOn): "token \(VerbOutput.lifetime(secondsLeft: expiresOn - now))"
                case .signInNeeded: "sign-in needed"
                case .failed(let reason): "error: \(reason)"
                }
            lines.append(label + VerbOutput.username(status.account) + (status.current ? " (current)" : "") + ", " + token)
        }
        return lines.joined(separator: "\n")
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

    private static let layerNames = [
        "secretService": "the Secret Service", "keyring": "the kernel keyring (persistent, this user)",
        "keyFile": "the key file", "keyCommand": "the key command's output",
    ]

    /// A forwarded agent's host, or the forward socket's sessions.
    private var forwardingText: String? {
        guard let forwarding else { return nil }
        if forwarding["forwarded"]?.boolValue == true {
            return "forwarded agent from \(forwarding["host"]?.stringValue ?? "?") (tokens for its forwardScopes only)"
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
