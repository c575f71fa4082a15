import Testing

@testable import Sidecar

/// The sign-in way each faked environment gets, and the line that says why.
@Suite struct SignInWayTests {
    static let headless = BrowserAvailability(headless: true, browserVariableSet: false, browserCommand: "/usr/bin/xdg-open")
    static let desktop = BrowserAvailability(headless: false, browserVariableSet: false, browserCommand: "/usr/bin/xdg-open")
    static let browserSet = BrowserAvailability(headless: true, browserVariableSet: true, browserCommand: "firefox")

    @Test func aDisplayOrBrowserOpensTheSystemBrowser() {
        let desktop = SignInWay.choose(SignInEnvironment(browser: Self.desktop, display: "DISPLAY=:0"))
        #expect(desktop.method == .systemBrowser && desktop.line == "signing in with the browser: a display (DISPLAY=:0)")
        let forwarded = SignInWay.choose(SignInEnvironment(browser: Self.desktop, display: "DISPLAY=localhost:10.0", ssh: "SSH_CONNECTION"))
        #expect(forwarded.method == .systemBrowser && forwarded.reason.contains("a forwarded display"))
        let chosen = SignInWay.choose(SignInEnvironment(browser: Self.browserSet, ssh: "SSH_CONNECTION"))
        #expect(chosen.method == .systemBrowser && chosen.reason == "$BROWSER is set")
    }

    @Test func wslUsesTheWindowsBrowser() {
        let wsl = SignInEnvironment(browser: Self.desktop, display: "DISPLAY=:0", wsl: "WSL_DISTRO_NAME=Ubuntu", windowsLauncher: "wslview")
        #expect(SignInWay.choose(wsl).method == .windowsBrowser("wslview"))
        #expect(
            SignInWay.choose(wsl).line == "signing in with the Windows browser: WSL (WSL_DISTRO_NAME=Ubuntu): the Windows browser through wslview")
        var bare = wsl
        bare.windowsLauncher = nil
        bare.display = nil
        bare.browser = Self.headless
        #expect(SignInWay.choose(bare).method == .deviceCode)
        #expect(SignInWay.choose(bare).reason.contains("without wslview, explorer.exe or cmd.exe"))
    }

    @Test func sshWithoutADisplayUsesTheDeviceCode() {
        let ssh = SignInEnvironment(browser: Self.headless, ssh: "SSH_CONNECTION", sshHost: "me@10.0.0.5")
        let way = SignInWay.choose(ssh)
        #expect(way.method == .deviceCode)
        #expect(way.line.hasPrefix("signing in with a device code: over SSH (SSH_CONNECTION is set) with no forwarded display"))
        #expect(SignInWay.choose(ssh, redirectPort: 8400).method == .printedURL)
        #expect(SignInWay.choose(ssh, forced: .browser).method == .printedURL)
        #expect(SignInWay.choose(SignInEnvironment(browser: Self.headless)).reason.hasPrefix("no display"))
        // Where no browser opens and no port can be forwarded, the paste-back is offered.
        #expect(
            SignInWay.choose(SignInEnvironment(browser: Self.headless)).reason.hasSuffix(
                "--paste to sign in in any browser and paste back the address"))
        #expect(way.reason.contains("--paste"))
        let noOpener = BrowserAvailability(headless: false, browserVariableSet: false, browserCommand: nil)
        #expect(
            SignInWay.choose(SignInEnvironment(browser: noOpener, display: "DISPLAY=:1")).reason.hasPrefix("a display (DISPLAY=:1) but no xdg-open"))
    }

    @Test func forcedWaysWin() {
        let desktop = SignInEnvironment(browser: Self.desktop, display: "DISPLAY=:0")
        #expect(SignInWay.choose(desktop, forced: .paste).method == .paste)
        #expect(SignInWay.choose(desktop, forced: .paste).line.hasPrefix("signing in with a pasted address: --paste was given"))
        #expect(SignInWay.choose(desktop, forced: .deviceCode) == SignInWay(method: .deviceCode, reason: "--device-code was given"))
        #expect(SignInWay.choose(SignInEnvironment(browser: Self.browserSet), forced: .browser).method == .systemBrowser)
    }

    @Test func theSSHHostComesFromTheConnection() {
        #expect(SignInEnvironment.sshHost(connection: "10.0.0.9 50000 10.0.0.5 22", user: "me") == "me@10.0.0.5")
        #expect(SignInEnvironment.sshHost(connection: "::1 50000 fe80::1 22", user: nil) == "[fe80::1]")
        #expect(SignInEnvironment.sshHost(connection: nil, user: "me") == "THIS-HOST")
        #expect(SignInEnvironment.sshHost(connection: nil, user: "me", hostName: "build-7") == "build-7")
    }

    @Test func procVersionIsReadThroughTheSeam() {
        // Only meaningful where no WSL variable is set (the test machine).
        let environment = SignInEnvironment.current { "Linux version 5.15.90.1-microsoft-standard-WSL2" }
        #expect(environment.wsl != nil)
        let plain = SignInEnvironment.current { "Linux version 6.1.0-13-amd64 (debian-kernel@lists.debian.org)" }
        #expect(plain.wsl == nil || plain.wsl?.hasPrefix("WSL_") == true)
    }

    @Test func redirectPortFixesTheRedirectURIsPort() throws {
        var overrides = ConfigurationOverrides()
        overrides.clientId = "00000000-0000-0000-0000-000000000001"
        overrides.redirectPort = 8400
        #expect(try overrides.resolved().redirectUri == "http://localhost:8400")
        overrides.redirectUri = "http://127.0.0.1:5000/cb"
        #expect(try overrides.resolved().redirectUri == "http://127.0.0.1:8400/cb")
        overrides.redirectPort = 70000
        #expect(throws: (any Error).self) { try overrides.resolved() }
        #expect(try ConfigurationOverrides(params: ["redirectPort": 8400]).redirectPort == 8400)
    }
}
