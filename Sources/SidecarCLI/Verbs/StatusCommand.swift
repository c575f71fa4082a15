import ArgumentParser
import JSON
import JSONRPC
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `auth-sidecar status`: the configuration in force, the agent, the accounts and their tokens.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the configuration in force, the agent, and the accounts with their token lifetimes.",
        discussion: """
            Each account's token is the one for the configured scopes, acquired silently (so an \
            expired token is renewed, as 'token' would). Never prints a token or a secret.
            """)

    @Option(help: "text or json.")
    var output: OutputFormat = .text

    @OptionGroup var common: VerbOptions

    func run() throws {
        try VerbSession.run(common) { session throws(VerbFailure) in
            let report = try Self.report(session)
            switch output {
            case .json: session.print(report.json.jsonText)
            case .text: session.print(report.text(now: Int64(time(nil))))
            }
        }
    }

    static func report(_ session: VerbSession) throws(VerbFailure) -> StatusReport {
        let accounts = try session.call("getAccounts")["accounts"]?.arrayValue ?? []
        let current = try session.outcome("acquireTokenSilent")
        let currentID = (try? current.get())?["account"]?["homeAccountId"]
        var statuses: [StatusReport.AccountStatus] = []
        for account in accounts {
            let isCurrent = currentID != nil && account["homeAccountId"] == currentID
            let outcome =
                isCurrent
                ? current
                : try session.outcome("acquireTokenSilent", ["account": ["homeAccountId": account["homeAccountId"] ?? .null]])
            statuses.append(.init(account: account, current: isCurrent, token: tokenState(outcome)))
        }
        return StatusReport(
            configuration: try session.configuration, cacheProtection: try session.cacheProtection, origins: session.sources.origins,
            engine: session.connection.engine,
            agentSocket: session.agentSocket, agentState: session.connection.agentState, forwarding: try session.agentInfo,
            accounts: statuses)
    }

    private static func tokenState(_ outcome: Result<JSONValue, RPCError>) -> StatusReport.TokenState {
        switch outcome {
        case .success(let result): .valid(expiresOn: result["expiresOn"]?.intValue ?? 0)
        case .failure(let error) where error.code == AuthErrorMapping.interactionRequiredCode: .signInNeeded(VerbFailure.oneLine(error.message))
        case .failure(let error): .failed(VerbFailure.oneLine(error.message))
        }
    }
}
