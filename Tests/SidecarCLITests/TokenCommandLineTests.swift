import ArgumentParser
import Testing

@testable import SidecarCLI

/// The `token` fast path and swift-argument-parser must read every `token` line the same way.
@Suite struct TokenCommandLineTests {
    static let plainLines: [[String]] = [
        [],
        ["--scope", "User.Read"],
        ["--scope", "a", "--scope=b", "--output", "json", "--force-refresh"],
        ["--resource", "https://management.azure.com", "--output=az", "--no-agent"],
        ["--account", "alice@contoso.com", "--tenant", "contoso.com", "--config", "/c.json"],
        ["--client-id", "app", "--authority=https://login.microsoftonline.com/organizations", "--cache", "memory"],
        ["--log-level", "debug", "--http-timeout-seconds", "5", "--interactive-timeout-seconds=60", "--output", "token"],
    ]

    @Test(arguments: plainLines)
    func agreesWithTheFullParser(arguments: [String]) throws {
        let (request, options) = try #require(TokenCommandLine.parse(arguments[...]))
        let command = try #require(try AuthSidecarCommand.parseAsRoot(["token"] + arguments) as? TokenCommand)
        #expect(request == command.request)
        #expect(options == command.common.plain)
    }

    static let unusualLines: [[String]] = [
        ["--help"], ["-h"], ["--output", "yaml"], ["--scope"], ["--scope", "--output", "json"], ["--account", "a", "--account", "b"],
        ["--resource", "r", "--scope", "s"], ["--resource", ""], ["--tenant", "a/b"], ["--force-refresh=yes"],
        ["--unknown", "x"], ["positional"], ["--max-message-size", "1024"], ["--enable-diagnostics"], ["--log-level", "loud"],
        ["--no-agent", "--no-agent"],
    ]

    @Test(arguments: unusualLines)
    func leavesEverythingElseToTheFullParser(arguments: [String]) {
        #expect(TokenCommandLine.parse(arguments[...]) == nil)
    }
}
