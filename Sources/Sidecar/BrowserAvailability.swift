/// Whether the system browser can be opened on this machine: the one rule behind
/// `getDeviceInformation`'s `canOpenBrowser` and the shell verbs' choice between opening the
/// sign-in page and printing its URL (over SSH, in a container).
public struct BrowserAvailability: Sendable, Equatable {
    /// Neither `DISPLAY` nor `WAYLAND_DISPLAY` is set.
    public var headless: Bool
    /// `$BROWSER` is set (the user chose the command; it may work without a display).
    public var browserVariableSet: Bool
    /// `$BROWSER` when not empty, else the path of `xdg-open`, if any.
    public var browserCommand: String?

    public init(headless: Bool, browserVariableSet: Bool, browserCommand: String?) {
        self.headless = headless
        self.browserVariableSet = browserVariableSet
        self.browserCommand = browserCommand
    }

    /// A browser command exists, and either there is a display or `$BROWSER` names the command.
    public var canOpenSystemBrowser: Bool { browserCommand != nil && (!headless || browserVariableSet) }

    /// The facts of this process's environment, now.
    public static func current() -> BrowserAvailability {
        let environment = ProcessEnvironment.self
        let browser = environment.value("BROWSER")
        return BrowserAvailability(
            headless: environment.value("DISPLAY") == nil && environment.value("WAYLAND_DISPLAY") == nil,
            browserVariableSet: browser != nil,
            browserCommand: browser.flatMap { $0.isEmpty ? nil : $0 } ?? environment.which("xdg-open"))
    }
}
