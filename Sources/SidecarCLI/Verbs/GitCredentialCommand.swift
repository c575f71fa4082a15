import Adapters
import ArgumentParser
import JSON
import Sidecar

/// `auth-sidecar git-credential get|store|erase`: a git credential helper (gitcredentials(7))
/// giving Entra access tokens as passwords to the hosts ``GitCredentialHosts`` maps.
///
/// `get` for a mapped https host answers `username`, `password` (the token) and
/// `password_expiry_utc`; for any other host it prints nothing and exits 0, so git asks its
/// next helper (and the engine is never started). `store` has nothing to keep. `erase` (git
/// saw the password refused) redeems the refresh token at once (`forceRefresh`), so the
/// cached token that was refused is replaced and the next `get` answers the new one.
struct GitCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "A git credential helper: Entra access tokens as passwords for Azure DevOps.",
        discussion: """
            Setup: git config --global credential.https://dev.azure.com.helper "!auth-sidecar git-credential". \
            Reads git's description (key=value lines) on stdin. 'get' answers for https://dev.azure.com and \
            https://*.visualstudio.com (scope 499b84ac-1321-427f-aa17-267ca6975798/.default) and prints nothing \
            for other hosts; 'store' does nothing; 'erase' renews the token. Exit status as the other verbs.
            """)

    @Argument(help: "get, store or erase (git passes it).")
    var action: String

    @OptionGroup var common: VerbOptions

    func validate() throws {
        do { _ = try GitCredential.action(action) } catch { throw ValidationError(error.description) }
    }

    func run() throws {
        let action: GitCredential.Action
        let attributes: [String: String]
        do {
            action = try GitCredential.action(self.action)
            attributes = try GitCredential.parse(Console.readInput(limit: GitCredential.inputLimit))
        } catch {
            Console.say("git-credential: \(error.description)")
            throw ExitCode(VerbFailure.failureStatus)
        }
        guard action != .store,
            let scope = GitCredentialHosts.default.scope(protocol: attributes["protocol"], host: attributes["host"])
        else { return }
        try VerbSession.run(common) { session throws(VerbFailure) in
            var request = AcquireTokenSilentRequest(scopes: [scope])
            request.forceRefresh = action == .erase
            let result = try session.call(request)
            guard action == .get else { return }
            let username = result.account["username"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "auth-sidecar"
            guard let answer = GitCredential.answer(username: username, token: result.accessToken, expiresOn: result.expiresOn) else {
                throw VerbFailure(message: "git-credential: the engine's answer has no usable token")
            }
            session.print(answer)
        }
    }
}
