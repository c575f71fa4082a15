import ArgumentParser
import Testing

@testable import SidecarCLI

/// The verbs' command lines: swift-argument-parser reads them; the fast path takes only plain
/// `token` lines and declines the rest.
@Suite struct VerbParsingTests {
    static let verbNames = AuthSidecarCommand.configuration.subcommands.map { $0._commandName }

    @Test func theVerbsAreTheFiveOfTheIssueTheAdaptersThenTheAgent() {
        #expect(
            Self.verbNames == [
                "token", "login", "logout", "accounts", "profiles", "status", "cache", "git-credential", "kubectl-credential",
                "managed-identity", "azd-auth-server", "docker-config", "exec", "ssh-cert", "ssh-config", "where", "agent",
            ])
    }

    @Test func adapterOptions() throws {
        let az = try #require(try AuthSidecarCommand.parseAsRoot(["token", "--output", "az", "--resource", "https://r"]) as? TokenCommand)
        #expect(az.output == .az && az.resource == "https://r")
        let git = try #require(try AuthSidecarCommand.parseAsRoot(["git-credential", "erase"]) as? GitCredentialCommand)
        #expect(git.action == "erase")
        let kubectl = try #require(try AuthSidecarCommand.parseAsRoot(["kubectl-credential"]) as? KubectlCredentialCommand)
        #expect(kubectl.requestedScope == "6dae42f8-4368-4678-94ff-3960e28e3630/.default" && !kubectl.idToken)
        let oidc = try #require(try AuthSidecarCommand.parseAsRoot(["kubectl-credential", "--id-token"]) as? KubectlCredentialCommand)
        #expect(oidc.idToken && oidc.requestedScope == nil)
        let profile = try #require(try AuthSidecarCommand.parseAsRoot(["profiles", "use", "lab", "--output", "json"]) as? ProfilesUseCommand)
        #expect(profile.name == "lab" && profile.profiles.output == .json)
        let use = try #require(try AuthSidecarCommand.parseAsRoot(["accounts", "use", "a@b"]) as? AccountsUseCommand)
        #expect(use.account == "a@b")
        let endpoint = try #require(try AuthSidecarCommand.parseAsRoot(["managed-identity", "--port", "8080"]) as? ManagedIdentityCommand)
        let azd = try #require(try AuthSidecarCommand.parseAsRoot(["azd-auth-server", "--port", "8081"]) as? AzdAuthServerCommand)
        #expect(azd.port == 8081)
        #expect(endpoint.port == 8080)
    }

    static let verbLines: [[String]] =
        verbNames.filter { $0 != "token" && $0 != "ssh-cert" }.map { [$0] } + [
            ["--client-id", "x", "token"], ["status", "--output", "json"], ["login", "--device-code"],
            ["--client-id=x", "accounts"], ["--enable-diagnostics", "status"], ["git-credential", "get"],
        ]

    @Test(arguments: verbLines)
    func theFastPathDeclinesEveryVerbButAPlainTokenOrSSHCert(arguments: [String]) {
        #expect(PlainCommandLine.parse(arguments) == nil)
    }

    @Test func tokenOptions() throws {
        let command = try #require(
            try AuthSidecarCommand.parseAsRoot([
                "token", "--scope", "a", "--scope", "b", "--account", "alice@contoso.com", "--tenant", "contoso.com",
                "--output", "json", "--force-refresh", "--client-id", "app", "--config", "/c.json", "--no-agent",
            ]) as? TokenCommand)
        #expect(command.scopes == ["a", "b"])
        #expect(command.account == "alice@contoso.com")
        #expect(command.tenant == "contoso.com")
        #expect(command.output == .json)
        #expect(command.forceRefresh)
        #expect(command.common.noAgent)
        #expect(command.common.configuration.launchOptions == LaunchOptions(clientID: "app", config: "/c.json"))
    }

    @Test func defaults() throws {
        let token = try #require(try AuthSidecarCommand.parseAsRoot(["token"]) as? TokenCommand)
        #expect(token.output == .token && token.scopes.isEmpty && !token.forceRefresh && !token.common.noAgent)
        let login = try #require(try AuthSidecarCommand.parseAsRoot(["login"]) as? LoginCommand)
        #expect(login.output == .text && !login.deviceCode && login.loginHint == nil)
        let logout = try #require(try AuthSidecarCommand.parseAsRoot(["logout", "--browser"]) as? LogoutCommand)
        #expect(logout.browser && logout.account == nil)
        #expect(try AuthSidecarCommand.parseAsRoot(["accounts", "--output", "json"]) is AccountsCommand)
        #expect(try AuthSidecarCommand.parseAsRoot(["status"]) is StatusCommand)
    }

    static let badLines: [[String]] = [
        ["frobnicate"], ["token", "--output", "xml"], ["status", "--output", "token"], ["token", "extra"],
        ["login", "--device-code", "--login-hint", "a@b.c"], ["token", "--tenant", "a/b"], ["token", "--tenant", ""],
        ["accounts", "--unknown"], ["git-credential"], ["git-credential", "steal"], ["token", "--resource", "r", "--scope", "s"],
        ["token", "--resource", ""], ["managed-identity", "--port", "70000"], ["azd-auth-server", "--port", "70000"],
        ["kubectl-credential", "extra"],
    ]

    @Test(arguments: badLines)
    func badInputIsAUsageError(arguments: [String]) {
        #expect(throws: (any Error).self) { _ = try AuthSidecarCommand.parseAsRoot(arguments) }
        #expect(AuthSidecarCommand.exitCode(for: capturedError { _ = try AuthSidecarCommand.parseAsRoot(arguments) }) == .validationFailure)
    }

    @Test func theStdioModeStillParsesAtTheRoot() throws {
        let root = try #require(try AuthSidecarCommand.parseAsRoot(["--client-id", "x", "--max-message-size", "100"]) as? AuthSidecarCommand)
        #expect(root.launchOptions == LaunchOptions(clientID: "x", maxMessageSize: 100))
    }
}

/// The error `body` throws.
private func capturedError(_ body: () throws -> Void) -> any Error {
    do { try body() } catch { return error }
    return CancellationError()
}
