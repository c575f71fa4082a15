import Testing

@testable import SidecarCLI

/// The fast path and swift-argument-parser must read every argument line the same way.
@Suite struct LaunchOptionsTests {
    static let plainLines: [[String]] = [
        [],
        ["--client-id", "abc"],
        ["--client-id=abc", "--authority", "https://login.microsoftonline.com/organizations"],
        ["--config", "/etc/app.json", "--cache", "memory", "--log-level", "debug"],
        ["--max-message-size", "1024", "--enable-diagnostics", "--cache=/tmp/c.json"],
        ["--log-level=trace", "--client-id", "x"],
        ["--http-timeout-seconds", "5", "--interactive-timeout-seconds=120", "--client-id", "x"],
    ]

    @Test(arguments: plainLines)
    func agreesWithTheFullParser(arguments: [String]) throws {
        let quick = try #require(LaunchOptions.quickParse(arguments))
        #expect(quick == (try AuthSidecarCommand.parse(arguments)).launchOptions)
    }

    static let unusualLines: [[String]] = [
        ["--help"], ["-h"], ["--version"], ["--client-id"], ["--client-id", "--authority", "x"],
        ["--log-level", "loud"], ["--max-message-size", "12"], ["--max-message-size", "big"],
        ["--client-id", "a", "--client-id", "b"], ["--unknown", "x"], ["positional"], ["--enable-diagnostics=yes"],
        ["--http-timeout-seconds", "soon"],
    ]

    @Test(arguments: unusualLines)
    func leavesEverythingElseToTheFullParser(arguments: [String]) {
        #expect(LaunchOptions.quickParse(arguments) == nil)
    }
}
