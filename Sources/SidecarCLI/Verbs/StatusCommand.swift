import ArgumentParser
import JSON
import JSONRPC
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `auth-sidecar status`: am I signed in, as whom, until when; the cache, its key, the agent.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show who is signed in, each cached token's scopes and minutes left, the cache, its key, and the agent.",
        discussion: """
            One screen (or --output json): the accounts and their tenants, each cached access \
            token's scopes and minutes left, whether a refresh token is cached (never its value), \
            the last failed refresh, where the cache and its key live, the configuration in force, \
            and whether an agent serves this user (since when, how many clients). Each account's \
            token for the configured scopes is acquired silently first (an expired one is renewed, \
            as 'token' would). Exit status 0 when the current account is signed in, 2 when a \
            sign-in is needed. Never prints a token or a secret.
            """)

    @Option(help: "text or json.")
    var output: OutputFormat = .text

    @OptionGroup var common: VerbOptions

    func run() throws {
        var options = common.plain
        options.cacheProtection = true  // the one verb that prints it
        try VerbSession.run(options) { session throws(VerbFailure) in
            let report = try Self.report(session)
            switch output {
            case .json: session.print(report.json.jsonText)
            case .text: session.print(report.text(now: Int64(time(nil))))
            }
            if !report.signedIn { throw VerbFailure(status: VerbFailure.signInNeededStatus, message: report.signInAdvice) }
        }
    }

    static func report(_ session: VerbSession) throws(VerbFailure) -> StatusReport {
        let accounts = try session.call(GetAccountsRequest()).accounts
        let current = try session.outcome(AcquireTokenSilentRequest())
        let currentID = (try? current.get())?.account["homeAccountId"]
        var statuses: [StatusReport.AccountStatus] = []
        if try session.configuration["clientAssertion"] != nil {  // an app signs in as itself: it is the account
            let named: JSONValue = ["username": try session.configuration["clientId"] ?? .null, "homeAccountId": ""]
            statuses.append(.init(account: (try? current.get())?.account ?? named, current: true, token: tokenState(current)))
        }
        for account in accounts {
            let isCurrent = (currentID != nil && account["homeAccountId"] == currentID) || account["isCurrent"] == true
            let id = account["homeAccountId"]?.stringValue ?? ""
            let outcome = isCurrent ? current : try session.outcome(AcquireTokenSilentRequest(account: .homeAccountId(id)))
            statuses.append(.init(account: account, current: isCurrent, token: tokenState(outcome)))
        }
        let configuration = try session.configuration
        let importable = statuses.isEmpty ? SignInImport.importable(session.sources.overrides) : (count: 0, problems: [])
        return StatusReport(
            configuration: configuration, cacheProtection: try session.cacheProtection, origins: session.sources.origins,
            engine: session.connection.engine,
            agentSocket: session.agentSocket, agentState: session.connection.agentState, agentInfo: try session.agentInfo,
            accounts: statuses,  // A forwarded agent's cache is on its own machine: the path means nothing here.
            cache: try session.agentInfo?["forwarded"]?.boolValue == true ? nil : cacheSummary(configuration, session),
            profile: session.sources.profile,
            importable: importable.count, importProblems: importable.problems,
            sshCertificates: SSHKeyFiles.kept(configured: session.sources.overrides.sshCertificates ?? []))
    }

    /// The file cache's tokens and last refresh error, as the engine answers them (the engine
    /// holds the key: this process never decrypts the file itself).
    private static func cacheSummary(_ configuration: JSONValue, _ session: VerbSession) throws(VerbFailure) -> Result<CacheSummary, RPCError>? {
        guard configuration["cache"]?["path"] != nil else { return nil }
        return try session.outcome(GetCacheSummaryRequest())
    }

    private static func tokenState(_ outcome: Result<TokenResponse, RPCError>) -> StatusReport.TokenState {
        switch outcome {
        case .success(let result): .valid(expiresOn: result.expiresOn)
        case .failure(let error) where error.code == AuthErrorMapping.interactionRequiredCode: .signInNeeded(VerbFailure.oneLine(error.message))
        case .failure(let error): .failed(VerbFailure.oneLine(error.message))
        }
    }
}
