import AuthSeams
import JSON
import POSIXSupport
import TokenCache

/// Fetches each authority's discovery document once and shares the answer; answers kept by
/// an earlier process (``PersistedDiscovery``) are used without a request.
public actor MetadataCache {
    private let transport: any HTTPTransport
    private let persisted: PersistedDiscovery
    /// What is known without a request, under a lock of its own (a ``PthreadMutex``, which
    /// ThreadSanitizer sees): ``known(_:in:)`` answers without waiting for the actor (a cached
    /// token is found on the thread that asked).
    private let offline = PthreadMutex(Offline())
    private var pending: [String: Task<OpenIDMetadata, any Error>] = [:]

    private struct Offline {
        var known: [String: OpenIDMetadata] = [:]
        /// Authorities whose kept metadata was looked for (found or not): once per process.
        var lookedUp: Set<String> = []
    }

    public init(transport: any HTTPTransport, persisted: PersistedDiscovery = PersistedDiscovery(cache: nil)) {
        self.transport = transport
        self.persisted = persisted
    }

    /// The metadata known without a request: fetched earlier, or kept in `document` (`nil`:
    /// the cache is read, once per process and authority).
    public nonisolated func known(_ authority: Authority, in document: CacheDocument? = nil) -> OpenIDMetadata? {
        let key = authority.key
        let (cached, lookUp) = offline.withLock { state in
            (state.known[key], document != nil || state.lookedUp.insert(key).inserted)
        }
        if let cached { return cached }
        guard lookUp, let kept = persisted.metadata(for: authority, in: document) else { return nil }
        offline.withLock { $0.known[key] = kept }
        return kept
    }

    public func metadata(for authority: Authority) async throws -> OpenIDMetadata {
        if let cached = known(authority) { return cached }
        if let running = pending[authority.key] { return try await running.value }
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
        pending[authority.key] = task
        defer { pending[authority.key] = nil }
        let metadata = try await task.value
        offline.withLock { $0.known[authority.key] = metadata }
        return metadata
    }
}
