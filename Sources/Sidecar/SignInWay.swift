#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The facts an interactive sign-in chooses its way from: a display or `$BROWSER`, WSL and
/// its Windows browser launchers, an SSH session. Read once by ``current(procVersion:)``; tests
/// build it by hand.
public struct SignInEnvironment: Sendable, Equatable {
    public var browser: BrowserAvailability
    /// Which variable says there is a display (`DISPLAY=:0`), if any.
    public var display: String?
    /// Why this is WSL (`WSL_DISTRO_NAME=Ubuntu`, `/proc/version mentions Microsoft`); nil: not WSL.
    public var wsl: String?
    /// The first of `wslview`, `explorer.exe`, `cmd.exe` on `PATH` (WSL only).
    public var windowsLauncher: String?
    /// Which variable says this is an SSH session (`SSH_CONNECTION`); nil: not over SSH.
    public var ssh: String?
    /// The host name to give `ssh -L` (the server address of `SSH_CONNECTION`, else the host name).
    public var sshHost: String

    public init(
        browser: BrowserAvailability, display: String? = nil, wsl: String? = nil, windowsLauncher: String? = nil,
        ssh: String? = nil, sshHost: String = "THIS-HOST"
    ) {
        self.browser = browser
        self.display = display
        self.wsl = wsl
        self.windowsLauncher = windowsLauncher
        self.ssh = ssh
        self.sshHost = sshHost
    }

    /// Windows launchers, in the order they are preferred.
    public static let windowsLaunchers = ["wslview", "explorer.exe", "cmd.exe"]

    /// This process's facts. `procVersion` reads `/proc/version` (a seam: tests point
    /// `AUTH_SIDECAR_TEST_PROC_VERSION` at a file of their own, which only the tests set).
    public static func current(procVersion: () -> String? = defaultProcVersion) -> SignInEnvironment {
        let environment = ProcessEnvironment.self
        let display = ["WAYLAND_DISPLAY", "DISPLAY"].first { environment.value($0)?.isEmpty == false }
        var wsl = ["WSL_DISTRO_NAME", "WSL_INTEROP"].first { environment.value($0)?.isEmpty == false }
            .map { "\($0)=\(environment.value($0) ?? "")" }
        if wsl == nil, procVersion()?.lowercased().contains("microsoft") == true { wsl = "/proc/version mentions Microsoft" }
        let ssh = ["SSH_CONNECTION", "SSH_TTY"].first { environment.value($0)?.isEmpty == false }
        return SignInEnvironment(
            browser: .current(), display: display.map { "\($0)=\(environment.value($0) ?? "")" }, wsl: wsl,
            windowsLauncher: wsl == nil ? nil : windowsLaunchers.first { environment.which($0) != nil },
            ssh: ssh,
            sshHost: sshHost(connection: environment.value("SSH_CONNECTION"), user: environment.value("USER"), hostName: hostName()))
    }

    /// Which variable says there is a display (`DISPLAY=:0`), if any: what ``display`` holds.
    public static func displayVariable() -> String? {
        ["WAYLAND_DISPLAY", "DISPLAY"].first { ProcessEnvironment.value($0)?.isEmpty == false }
            .map { "\($0)=\(ProcessEnvironment.value($0) ?? "")" }
    }

    /// `/proc/version`, or the file `AUTH_SIDECAR_TEST_PROC_VERSION` names (tests only).
    public static func defaultProcVersion() -> String? {
        ProcessEnvironment.readTextFile(ProcessEnvironment.value("AUTH_SIDECAR_TEST_PROC_VERSION") ?? "/proc/version", limit: 4096)
    }

    /// `user@server-address` from `SSH_CONNECTION` (`client port server port`), else this
    /// machine's host name, else `THIS-HOST`.
    static func sshHost(connection: String?, user: String?, hostName: String? = nil) -> String {
        let fields = connection?.split(separator: " ") ?? []
        guard fields.count >= 3 else { return hostName.flatMap { $0.isEmpty ? nil : $0 } ?? "THIS-HOST" }
        let address = fields[2].contains(":") ? "[\(fields[2])]" : String(fields[2])
        return user.map { "\($0)@\(address)" } ?? address
    }

    private static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// How an interactive sign-in goes, and the one line that says why (the shell verbs' rule).
public struct SignInWay: Sendable, Equatable {
    /// How the sign-in page is reached.
    public enum Method: Sendable, Equatable {
        /// `$BROWSER`/xdg-open.
        case systemBrowser
        /// WSL: the Windows browser through this launcher (`wslview`, `explorer.exe`, `cmd.exe`).
        case windowsBrowser(String)
        /// The URL printed, with the `ssh -L` line for its loopback redirect.
        case printedURL
        case deviceCode
        /// The paste-back sign-in: the URL printed, opened in any browser anywhere, and the
        /// address the browser ends on pasted back (nothing listens; no port to forward).
        case paste
    }

    /// What the command line forces.
    public enum Forced: Sendable, Equatable {
        case browser, deviceCode, paste
    }

    public var method: Method
    /// Why, in plain words (shown after "signing in with ...").
    public var reason: String

    public init(method: Method, reason: String) {
        self.method = method
        self.reason = reason
    }

    /// The way: forced by `--browser`/`--device-code`/`--paste`, else the system browser when it
    /// can open here, WSL's Windows browser, the printed URL when the redirect port was fixed for
    /// forwarding, and the device code otherwise (over SSH, or with neither display nor
    /// `$BROWSER`), whose reason offers the paste-back where no browser opens and no port can be
    /// forwarded (a tenant may refuse the device code: then the paste-back is the way left).
    public static func choose(_ environment: SignInEnvironment, forced: Forced? = nil, redirectPort: Int? = nil) -> SignInWay {
        let browser = environment.browser
        if forced == .deviceCode { return SignInWay(method: .deviceCode, reason: "--device-code was given") }
        if forced == .paste {
            return SignInWay(method: .paste, reason: "--paste was given: open the URL in any browser, then paste back the address it ends on")
        }
        if browser.browserVariableSet, browser.browserCommand != nil {
            return SignInWay(method: .systemBrowser, reason: forced == .browser ? "--browser was given; $BROWSER is set" : "$BROWSER is set")
        }
        if let wsl = environment.wsl, let launcher = environment.windowsLauncher {
            return SignInWay(method: .windowsBrowser(launcher), reason: "WSL (\(wsl)): the Windows browser through \(launcher)")
        }
        if let display = environment.display, browser.canOpenSystemBrowser {
            let shown = environment.ssh == nil ? "a display (\(display))" : "a forwarded display (\(display))"
            return SignInWay(method: .systemBrowser, reason: shown)
        }
        if forced == .browser {
            return SignInWay(method: .printedURL, reason: "--browser was given, but no browser can be opened here: open the URL yourself")
        }
        if let redirectPort {
            return SignInWay(method: .printedURL, reason: "the redirect port is fixed (\(redirectPort)) for a forwarded browser")
        }
        if let wsl = environment.wsl {
            return SignInWay(
                method: .deviceCode,
                reason: "WSL (\(wsl)) without wslview, explorer.exe or cmd.exe on PATH; --browser to open the URL yourself")
        }
        if let ssh = environment.ssh {
            return SignInWay(
                method: .deviceCode,
                reason: "over SSH (\(ssh) is set) with no forwarded display; --browser --redirect-port N for a browser through ssh -L, "
                    + "--paste to sign in in any browser and paste back the address")
        }
        if let display = environment.display {
            return SignInWay(
                method: .deviceCode, reason: "a display (\(display)) but no xdg-open and no $BROWSER; --browser to open the URL yourself")
        }
        return SignInWay(
            method: .deviceCode,
            reason: "no display (DISPLAY, WAYLAND_DISPLAY), no $BROWSER and no SSH session to forward a port through; "
                + "--paste to sign in in any browser and paste back the address")
    }

    /// The line for stderr: which way, and why.
    public var line: String {
        let what: String =
            switch method {
            case .systemBrowser: "signing in with the browser"
            case .windowsBrowser: "signing in with the Windows browser"
            case .printedURL: "signing in with a browser you open"
            case .deviceCode: "signing in with a device code"
            case .paste: "signing in with a pasted address"
            }
        return "\(what): \(reason)"
    }
}
