/// Starts listening for the authorization response of one interactive sign-in.
public protocol RedirectListener: Sendable {
    /// Starts listening for the redirect URI configured for the app and returns the
    /// pending redirect. Throws `LoopbackError.invalidRedirectURI` or `.bindFailed`.
    func start(redirectURI: String) async throws -> any PendingRedirect
}

/// One listening endpoint waiting for one authorization response.
public protocol PendingRedirect: Sendable {
    /// The concrete redirect URI to send to the authorize endpoint (and later to the
    /// token endpoint), e.g. `http://localhost:43123`: the configured URI with the
    /// bound port.
    var redirectURI: String { get }

    /// Waits for the redirect whose `state` equals `expectedState`, answers the browser,
    /// closes the listener and returns the parameters (also when they carry an `error`).
    /// Throws `LoopbackError.timedOut` after `timeout`, `CancellationError` when the task
    /// is cancelled (the socket is closed and the port freed before it returns).
    func response(expectedState: String, timeout: Duration) async throws -> AuthorizationResponse

    /// Stops listening and frees the port. Idempotent; a pending `response` fails
    /// with `LoopbackError.closed`.
    func close() async
}
