import AuthSeams
import JSON

/// Each issuer's signing keys, fetched from its `jwks_uri` once and kept with the metadata
/// (``PersistedDiscovery``, a day). A token signed by a key not yet known fetches the set
/// again (key rotation), at most once per set per minute.
actor SigningKeyCache {
    private let transport: any HTTPTransport
    private let persisted: PersistedDiscovery
    private var known: [String: SigningKeys] = [:]
    private var fetchedAt: [String: Int64] = [:]

    init(transport: any HTTPTransport, persisted: PersistedDiscovery) {
        self.transport = transport
        self.persisted = persisted
    }

    /// The keys at `uri` that include `kid` when possible (fetched again once if they don't).
    func keys(at uri: String, including kid: String?) async throws -> SigningKeys {
        if let keys = known[uri] ?? persisted.signingKeys(at: uri) {
            known[uri] = keys
            let now = persisted.clock.now()
            guard !keys.has(kid: kid), now - (fetchedAt[uri] ?? 0) >= 60 else { return keys }
        }
        let response = try await ServiceCall.send(HTTPRequest(url: uri), over: transport)
        guard response.status == 200, let json = try? JSONValue.parse(response.body), let keys = SigningKeys(json) else {
            var error = AuthError(.malformedResponse, "the issuer's signing keys (jwks_uri) could not be read (HTTP \(response.status))")
            error.httpStatus = response.status
            throw error
        }
        known[uri] = keys
        fetchedAt[uri] = persisted.clock.now()
        persisted.saveSigningKeys(json, at: uri)
        return keys
    }
}
