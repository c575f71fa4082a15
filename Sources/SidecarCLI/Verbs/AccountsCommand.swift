import ArgumentParser
import JSON
import Sidecar

/// `auth-sidecar accounts`: the accounts in the token cache, their tenants and the current one.
struct AccountsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts",
        abstract: "List the accounts in the token cache, with their tenants; the current one is marked.",
        discussion: """
            One line per account (username, name, the tenants the cache holds tokens for, '(current)' on the \
            current account), or --output json: {"accounts": [Account]}, each with "tenants" and "isCurrent".
            """,
        subcommands: [AccountsUseCommand.self])

    @Option(help: "text or json.")
    var output: OutputFormat = .text

    @OptionGroup var common: VerbOptions

    func run() throws {
        try VerbSession.run(common) { session throws(VerbFailure) in
            let response = try session.call(GetAccountsRequest())
            let accounts = response.accounts
            switch output {
            case .json: session.print(response.result.jsonText)
            case .text where accounts.isEmpty: Console.say("no accounts; run 'auth-sidecar login'")
            case .text: session.print(VerbOutput.accountLines(accounts).joined(separator: "\n"))
            }
        }
    }
}

/// `auth-sidecar accounts use USER|HOME_ACCOUNT_ID`: switches the current account.
struct AccountsUseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Make an account the current one (what 'token' and getCurrentAccount use without --account).",
        discussion: """
            Takes the options of 'accounts' (--output text|json, the configuration), before or after USER. \
            Exit status 2 when no cached account matches: 'auth-sidecar login' signs it in.
            """)

    @Argument(help: ArgumentHelp("The account's username or home account ID.", valueName: "user"))
    var account: String

    /// `accounts`' options (`--output`, the configuration), which may also follow `use USER`.
    @ParentCommand var accounts: AccountsCommand

    func run() throws {
        let output = accounts.output
        try VerbSession.run(accounts.common) { session throws(VerbFailure) in
            let accounts = try session.call(GetAccountsRequest()).accounts
            let byId = accounts.first { $0["homeAccountId"]?.stringValue?.lowercased() == account.lowercased() }
            let request = SetCurrentAccountRequest(account: byId?["homeAccountId"]?.stringValue.map { .homeAccountId($0) } ?? .username(account))
            let response = try session.call(request, account: account)
            switch output {
            case .json: session.print(response.result.jsonText)
            case .text: session.print("Current account: \(VerbOutput.username(response.account))")
            }
        }
    }
}
