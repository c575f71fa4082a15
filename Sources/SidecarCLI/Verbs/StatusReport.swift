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
    var origins: [String]
    var engine: EngineConnection.Engine
    var agentSocket: String
    var agentState: EngineConnection.AgentState
    var accounts: [AccountStatus]

    var json: JSONValue {
        [
            "configuration": configuration,
            "configurationSources": JSONValue(origins),
            "engine": engine == .agent ? "agent" : "inProcess",
            "agent": ["socket": .string(agentSocket), "state": .string(agentStateName), "detail": JSONValue(agentDetail)],
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
        let cache = configuration["cache"]
        let cacheText: String =
            if let path = cache?["path"]?.stringValue {
                cache?["encryption"]?["keyFile"]?.stringValue.map { "\(path) (encrypted, key file \($0))" } ?? "\(path) (not encrypted)"
            } else {
                "in memory only"
            }
        var lines = [
            "client id:  \(configuration["clientId"]?.stringValue ?? "-")",
            "authority:  \(configuration["authority"]?.stringValue ?? "-")",
            "scopes:     \(configuration["scopes"]?.arrayValue?.compactMap(\.stringValue).joined(separator: " ") ?? "-")",
            "cache:      \(cacheText)",
            "from:       \(origins.isEmpty ? "defaults" : origins.joined(separator: ", "))",
            "agent:      \(agentSocket) (\(agentDetail.map { "\(agentStateName): \($0)" } ?? agentStateName))",
            "engine:     \(engine == .agent ? "the agent" : "in this process")",
        ]
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
