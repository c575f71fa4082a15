import Testing

@testable import Loopback

/// The argument vectors WSL's Windows launchers get, and the `cmd.exe` escaping.
@Suite struct WindowsBrowserLauncherTests {
    static let url = "https://login.example/authorize?a=1&b=%41%PATH%|x>y(z)^\"q\""

    @Test func wslviewAndExplorerGetTheURLAsItIs() {
        #expect(WindowsBrowserLauncher.arguments(launcher: "wslview", url: Self.url) == ["wslview", Self.url])
        #expect(
            WindowsBrowserLauncher.arguments(launcher: "/mnt/c/Windows/explorer.exe", url: Self.url) == ["/mnt/c/Windows/explorer.exe", Self.url])
    }

    @Test func cmdGetsEveryMetacharacterEscaped() {
        let arguments = WindowsBrowserLauncher.arguments(launcher: "cmd.exe", url: Self.url)
        #expect(arguments == ["cmd.exe", "/c", "start", #"https://login.example/authorize?a=1^&b=%^41%^PATH%^|x^>y^(z^)^^^"q^""#])
        // What cmd.exe makes of it: carets removed after %...% expansion (which matches nothing).
        #expect(Self.cmdUnescaped(arguments[3]) == Self.url)
        #expect(WindowsBrowserLauncher.cmdArgument("https://h/a b") == "https://h/a%^20b")
    }

    /// cmd.exe's caret phase: `^c` is `c`.
    static func cmdUnescaped(_ text: String) -> String {
        var result = ""
        var escaped = false
        for character in text {
            if !escaped, character == "^" {
                escaped = true
                continue
            }
            escaped = false
            result.append(character)
        }
        return result
    }
}
