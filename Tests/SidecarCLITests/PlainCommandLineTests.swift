import ArgumentParser
import Testing

@testable import SidecarCLI

/// The fast path and swift-argument-parser must read every plain line the same way, and the
/// fast path must decline everything else.
@Suite struct PlainCommandLineTests {
    static let plainStdioLines: [[String]] = [
        [],
        ["--client-id", "abc"],
        ["--client-id=abc", "--authority", "https://login.microsoftonline.com/organizations"],
        ["--config", "/etc/app.json", "--cache", "memory", "--log-level", "debug"],
        ["--max-message-size", "1024", "--enable-diagnostics", "--cache=/tmp/c.json"],
        ["--log-level=trace", "--client-id", "x"],
        ["--profile=b2c-test", "--client-id", "x"],
        ["--http-timeout-seconds", "5", "--interactive-timeout-seconds=120", "--client-id", "x"],
    ]

    @Test(arguments: plainStdioLines)
    func stdioLinesAgreeWithTheFullParser(arguments: [String]) throws {
        let quick = try #require(PlainCommandLine.parse(arguments))
        #expect(quick == .stdio(try AuthSidecarCommand.parse(arguments).launchOptions))
    }

    static let plainTokenLines: [[String]] = [
        [],
        ["--scope", "User.Read"],
        ["--scope", "a", "--scope=b", "--output", "json", "--force-refresh"],
        ["--resource", "https://management.azure.com", "--output=az", "--no-agent"],
        ["--account", "alice@contoso.com", "--tenant", "contoso.com", "--config", "/c.json"],
        ["--profile", "work", "--scope", "User.Read"],
        ["--client-id", "app", "--authority=https://login.microsoftonline.com/organizations", "--cache", "memory"],
        ["--log-level", "debug", "--http-timeout-seconds", "5", "--interactive-timeout-seconds=60", "--output", "token"],
    ]

    @Test(arguments: plainTokenLines)
    func tokenLinesAgreeWithTheFullParser(arguments: [String]) throws {
        let quick = try #require(PlainCommandLine.parse(["token"] + arguments))
        let command = try #require(try AuthSidecarCommand.parseAsRoot(["token"] + arguments) as? TokenCommand)
        #expect(quick == .token(command.request, command.common.plain))
    }

    static let plainSSHCertLines: [[String]] = [
        [], ["--key", "/home/a/.ssh/id_rsa"], ["--key=/k", "--output", "/tmp/c.pub", "--output-format", "json", "--no-agent"],
        ["--output-format=path", "--profile", "work", "--config", "/c.json"],
    ]

    @Test(arguments: plainSSHCertLines)
    func sshCertLinesAgreeWithTheFullParser(arguments: [String]) throws {
        let quick = try #require(PlainCommandLine.parse(["ssh-cert"] + arguments))
        let command = try #require(try AuthSidecarCommand.parseAsRoot(["ssh-cert"] + arguments) as? SSHCertCommand)
        #expect(quick == .sshCert(SSHCertRequest(key: command.key, output: command.output, format: command.format), command.common.plain))
    }

    static let unusualStdioLines: [[String]] = [
        ["--help"], ["-h"], ["--version"], ["--client-id"], ["--client-id", "--authority", "x"],
        ["--log-level", "loud"], ["--max-message-size", "12"], ["--max-message-size", "big"],
        ["--client-id", "a", "--client-id", "b"], ["--unknown", "x"], ["positional"], ["--enable-diagnostics=yes"],
        ["--http-timeout-seconds", "soon"], ["--enable-diagnostics", "--enable-diagnostics"], ["--force-refresh"], ["--no-agent"],
    ]

    static let unusualTokenLines: [[String]] = [
        ["--help"], ["-h"], ["--output", "yaml"], ["--scope"], ["--scope", "--output", "json"], ["--account", "a", "--account", "b"],
        ["--resource", "r", "--scope", "s"], ["--resource", ""], ["--tenant", "a/b"], ["--force-refresh=yes"],
        ["--unknown", "x"], ["positional"], ["--max-message-size", "1024"], ["--enable-diagnostics"], ["--log-level", "loud"],
        ["--no-agent", "--no-agent"], ["--force-refresh", "--force-refresh"],
    ]

    static let unusualSSHCertLines: [[String]] = [
        ["--help"], ["--output-format", "yaml"], ["--key"], ["--key", "-k"], ["--key", "a", "--key", "b"], ["--force-refresh"],
        ["--scope", "s"], ["positional"],
    ]

    static let unusualLines: [[String]] =
        unusualStdioLines + unusualTokenLines.map { ["token"] + $0 } + unusualSSHCertLines.map { ["ssh-cert"] + $0 }

    @Test(arguments: unusualLines)
    func leavesEverythingElseToTheFullParser(arguments: [String]) {
        #expect(PlainCommandLine.parse(arguments) == nil)
    }
}
