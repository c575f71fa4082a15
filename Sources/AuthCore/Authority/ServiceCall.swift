import AuthSeams

/// Sends a request to a service (the identity platform, Graph), turning transport failures
/// into ``AuthError`` platform kinds.
public enum ServiceCall {
    public static func send(
        _ request: HTTPRequest, over transport: any HTTPTransport,
        service: String = "the identity service"
    ) async throws -> HTTPResponse {
        do {
            return try await transport.send(request)
        } catch {
            let place = URLParts(request.url).map { "\(service) (\($0.origin))" } ?? service
            switch error {
            case .cancelled: throw CancellationError()
            case .timedOut: throw AuthError(.timeout, "\(place) did not answer in time; \(unreachableFix)")
            case .tls(let detail): throw AuthError(.tlsError, "TLS to \(place) failed: \(detail)")
            case .network(let detail):
                throw AuthError(.networkError, "network failure reaching \(place): \(detail); \(unreachableFix)")
            case .insecureOrInvalidURL(let detail): throw AuthError(.insecureAuthority, detail)
            case .libraryUnavailable(let detail): throw AuthError(.internal, detail)
            case .responseTooLarge(let limit):
                var tooLarge = AuthError(.responseTooLarge, "\(service) sent an answer larger than \(limit) bytes; the transfer was stopped")
                tooLarge.limit = limit
                throw tooLarge
            }
        }
    }

    /// What a user can check when a service cannot be reached: the message's second half.
    static let unreachableFix =
        "check the network connection, the proxy (HTTPS_PROXY, NO_PROXY) and the authority or endpoint configured"
}
