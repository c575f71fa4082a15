import AuthCore
import HTTP

/// Reads the claims of a `WWW-Authenticate: Bearer ... error="insufficient_claims",
/// claims="<base64 JSON>"` challenge (continuous access evaluation, conditional access).
enum ClaimsChallenge {
    static func claims(in header: String?) -> String? {
        guard let header, let start = header.range(of: "claims=\"") else { return nil }
        let value = header[start.upperBound...].prefix { $0 != "\"" }
        guard !value.isEmpty else { return nil }
        if value.hasPrefix("{") { return String(value) }
        guard let bytes = Base64URL.decode(value) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Transport failures of a Graph call as the auth layer's platform errors.
enum GraphTransportErrors {
    static func send(_ request: HTTPRequest, over transport: any HTTPTransport) async throws -> HTTPResponse {
        do {
            return try await transport.send(request)
        } catch {
            switch error {
            case .cancelled: throw CancellationError()
            case .timedOut: throw AuthError(.timeout, "Microsoft Graph did not answer within the timeout")
            case .tls(let detail): throw AuthError(.tlsError, "TLS to Microsoft Graph failed: \(detail)")
            case .network(let detail): throw AuthError(.networkError, "network failure calling Microsoft Graph: \(detail)")
            case .insecureOrInvalidURL(let detail): throw AuthError(.invalidConfiguration, detail)
            case .libraryUnavailable(let detail): throw AuthError(.internal, detail)
            }
        }
    }
}
