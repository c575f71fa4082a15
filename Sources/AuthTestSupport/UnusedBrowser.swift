import AuthSeams

/// A browser that never opens anything (the silent tests must not need one).
public struct UnusedBrowser: BrowserLauncher {
    public init() {}
    public func open(_ url: String) async throws { throw BrowserError.unavailable("no browser in this test") }
}
