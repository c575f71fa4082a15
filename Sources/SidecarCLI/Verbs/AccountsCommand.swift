import ArgumentParser
import JSON

/// `auth-sidecar accounts`: the accounts in the token cache.
struct AccountsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts",
        abstract: "List the accounts in the token cache.",
        discussion: "One line per account (username, name, tenant), or --output json: {\"accounts\": [Account]}.")

    @Option(help: "text or json.")
    var output: OutputFormat = .text

    @OptionGroup var common: VerbOptions

    func run() throws {
        try VerbSession.run(common) { session throws(VerbFailure) in
            let result = try session.call("getAccounts")
            let accounts = result["accounts"]?.arrayValue ?? []
            switch output {
            case .json: session.print(result.jsonText)
            case .text where accounts.isEmpty: Console.say("no accounts; run 'auth-sidecar login'")
            case .text: session.print(VerbOutput.accountLines(accounts).joined(separator: "\n"))
            }
        }
    }
}
