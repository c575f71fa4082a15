/// What became of the browser part of a sign-out (the `browserSignOut` of the result).
public enum BrowserSignOut: String, Sendable, Equatable {
    /// The browser was asked to open the authority's end-session endpoint.
    case opened
    /// The authority advertises no `end_session_endpoint`: only the cache was cleared.
    case notSupported
    /// The browser could not be opened, or the authority's metadata could not be fetched.
    case failed
}
