import AuthSeams
import JSON
import TokenCache

/// The endpoints of an authority, from its OpenID Connect discovery document.
public struct OpenIDMetadata: Sendable, Equatable {
    public let authorizationEndpoint: String
    public let tokenEndpoint: String
    /// Advertised, else derived from the token endpoint (AAD serves `.../devicecode` without
    /// advertising it).
    public let deviceCodeEndpoint: String?
    public let endSessionEndpoint: String?
    public let issuer: String?
    /// Where the issuer publishes its signing keys.
    public let jwksURI: String?

    /// The cache realm: the first path segment of the token endpoint (as MSAL for Python).
    public var realm: String? {
        URLParts(tokenEndpoint)?.path.split(separator: "/").first.map(String.init)
    }

    init(json: JSONValue, kind: Authority.Kind) throws(AuthError) {
        guard let authorize = json["authorization_endpoint"]?.stringValue,
              let token = json["token_endpoint"]?.stringValue
        else { throw .malformed("the discovery document lacks authorization_endpoint or token_endpoint") }
        let optional = ["end_session_endpoint", "jwks_uri"].compactMap { json[$0]?.stringValue }
        for endpoint in [authorize, token] + optional {
            guard URLParts(endpoint)?.isSecureOrLoopback == true else {
                throw AuthError(.insecureAuthority, "the discovery document advertises a non-https endpoint")
            }
        }
        authorizationEndpoint = authorize
        tokenEndpoint = token
        let derived = kind != .oidc && token.hasSuffix("/token") ? String(token.dropLast("token".count)) + "devicecode" : nil
        deviceCodeEndpoint = json["device_authorization_endpoint"]?.stringValue ?? derived
        endSessionEndpoint = json["end_session_endpoint"]?.stringValue
        issuer = json["issuer"]?.stringValue
        jwksURI = json["jwks_uri"]?.stringValue
    }
}

/// Fetches each authority's discovery document once and shares the answer; answers kept by
/// an earlier process (``PersistedDiscovery``) are used without a request.
public actor MetadataCache {
    private let transport: any HTTPTransport
    private let persisted: PersistedDiscovery
    private var known: [String: OpenIDMetadata] = [:]
    /// Authorities whose kept metadata was looked for (found or not): once per process.
    private var lookedUp: Set<String> = []
    private var pending: [String: Task<OpenIDMetadata, any Error>] = [:]

    public init(transport: any HTTPTransport, persisted: PersistedDiscovery = PersistedDiscovery(cache: nil)) {
        self.transport = transport
        self.persisted = persisted
    }

    /// The metadata known without a request: fetched earlier, or kept in `document` (`nil`:
    /// the cache is read, once per process and authority).
    public func known(_ authority: Authority, in document: CacheDocument? = nil) -> OpenIDMetadata? {
        if let cached = known[authority.url] { return cached }
        guard document != nil || lookedUp.insert(authority.url).inserted,
              let kept = persisted.metadata(for: authority, in: document)
        else { return nil }
        known[authority.url] = kept
        return kept
    }

    public func metadata(for authority: Authority) async throws -> OpenIDMetadata {
        if let cached = known(authority) { return cached }
        if let running = pending[authority.url] { return try await running.value }
        let transport = self.transport
        let persisted = self.persisted
        let task = Task { () async throws -> OpenIDMetadata in
            let response = try await ServiceCall.send(HTTPRequest(url: authority.metadataURL), over: transport)
            guard response.status == 200 else { throw DiscoveryFailure.error(response, authority: authority) }
            guard let json = try? JSONValue.parse(response.body) else { throw AuthError.malformed("the discovery document is not JSON") }
            let metadata = try OpenIDMetadata(json: json, kind: authority.kind)
            persisted.saveMetadata(json, for: authority)
            return metadata
        }
        pending[authority.url] = task
        defer { pending[authority.url] = nil }
        let metadata = try await task.value
        known[authority.url] = metadata
        return metadata
    }
}

/// Sends a request to a service (the identity platform, Graph), turning transport failures
/// into ``AuthError`` platform kinds.
public enum ServiceCall {
    public static func send(_ request: HTTPRequest, over transport: any HTTPTransport,
                            service: String = "the identity service") async throws -> HTTPResponse {
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
            }
        }
    }
}
