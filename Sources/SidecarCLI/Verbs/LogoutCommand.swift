import ArgumentParser
import JSON
import Sidecar

/// `auth-sidecar logout`: removes an account's tokens from the cache.
struct LogoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Sign out: remove an account's tokens from the cache.",
        discussion: "Exit status 1 when no account matches (or none is signed in).")

    @Option(help: ArgumentHelp("The account's username (default: the current account).", valueName: "user"))
    var account: String?

    @Flag(help: "Also end the browser session (opens the sign-out page).")
    var browser = false

    @Option(help: "text or json.")
    var output: OutputFormat = .text

    @OptionGroup var common: VerbOptions

    func run() throws {
        try VerbSession.run(common) { session throws(VerbFailure) in
            let request = SignoutRequest(account: account.map { .username($0) }, signoutFromBrowser: browser)
            let result: SignoutResponse
            switch try session.outcome(request) {
            case .success(let value): result = value
            case .failure(let error) where error.code == AuthErrorMapping.accountNotFoundCode:
                throw VerbFailure(message: account.map { "no signed-in account is \($0)" } ?? "no account is signed in")
            case .failure(let error): throw .from(error, account: account)
            }
            switch output {
            case .json: session.print(result.result.jsonText)
            case .text: session.print("Signed out \(VerbOutput.username(result.account))")
            }
        }
    }
}
