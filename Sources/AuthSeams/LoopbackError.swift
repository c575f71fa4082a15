/// Errors of the loopback redirect listener.
public enum LoopbackError: Error, Sendable, Equatable {
    /// The redirect URI cannot be served by a loopback listener (reason given).
    /// Accepted: `http://localhost[:port][/path]` or `http://127.0.0.1[:port][/path]`.
    case invalidRedirectURI(String)
    /// The socket could not be created, bound (e.g. port in use) or listened on.
    case bindFailed(String)
    /// No matching redirect arrived within the timeout.
    case timedOut
    /// The listener was closed (by `close()`) before a response arrived, or
    /// `response(expectedState:timeout:)` was called a second time.
    case closed
    /// `expectedState` was empty: a state is required to bind the redirect to the request.
    case emptyExpectedState
    /// The listening loop failed unexpectedly (e.g. `poll` failed).
    case serverFailed(String)
}

extension LoopbackError: CustomStringConvertible {
    /// Plain words for messages (never Swift's rendering of the enum).
    public var description: String {
        switch self {
        case .invalidRedirectURI(let reason): "invalid redirect URI: \(reason)"
        case .bindFailed(let reason): "cannot listen: \(reason)"
        case .timedOut: "no redirect arrived in time"
        case .closed: "the listener was closed"
        case .emptyExpectedState: "no state to expect"
        case .serverFailed(let reason): "the listener failed: \(reason)"
        }
    }
}
