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
            switch error {
            case .cancelled: throw CancellationError()
            case .timedOut: throw AuthError(.timeout, "\(service) did not answer in time")
            case .tls(let detail): throw AuthError(.tlsError, "TLS to \(service) failed: \(detail)")
            case .network(let detail): throw AuthError(.networkError, "network failure reaching \(service): \(detail)")
            case .insecureOrInvalidURL(let detail): throw AuthError(.insecureAuthority, detail)
            case .libraryUnavailable(let detail): throw AuthError(.internal, detail)
            case .responseTooLarge(let limit):
                var tooLarge = AuthError(.responseTooLarge, "\(service) sent an answer larger than \(limit) bytes; the transfer was stopped")
                tooLarge.limit = limit
                throw tooLarge
            }
        }
    }
}
