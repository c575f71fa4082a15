/// Opens a URL for the user to sign in (the system browser, an editor, a test script).
public protocol BrowserLauncher: Sendable {
    /// Opens `url`. Returns once the browser was started; does not wait for it to close.
    /// Throws `BrowserError.unavailable` when no browser could be started.
    func open(_ url: String) async throws
}

/// Why a browser could not be opened.
public enum BrowserError: Error, Sendable, Equatable {
    /// No browser command is configured, none could be started, or each one failed
    /// (exited non-zero at once). The reason lists what was tried; it never contains the URL.
    case unavailable(String)
    /// The URL is not an `http`/`https` URL (or contains a NUL byte), so it is not passed
    /// to a command line (a leading `-` would be read as an option).
    case invalidURL
}

extension BrowserError: CustomStringConvertible {
    /// Plain words for messages (never Swift's rendering of the enum).
    public var description: String {
        switch self {
        case .unavailable(let reason): reason
        case .invalidURL: "invalid URL"
        }
    }
}
