import AuthSeams

/// A listener that must not be used.
public struct UnusedListener: RedirectListener {
    public init() {}
    public func start(redirectURI: String) async throws -> any PendingRedirect { throw LoopbackError.closed }
}
