import AuthSeams
import JSON
import POSIXSupport
import TokenCache

/// What the cache needs to look up an authority's tokens, known without the network.
public struct CacheView: Sendable, Equatable {
    /// The authority's host and its aliases (built in, or kept from an earlier discovery).
    public let environments: [String]
    /// The cache realm from the authority's metadata, when that is known (in memory or kept).
    public let metadataRealm: String?
}

/// Trust, instance discovery and OIDC discovery, each answer cached per authority in memory
/// and kept in the token cache for a day (``PersistedDiscovery``).
///
/// Instance discovery (AAD only, unless `knownAuthorities` lists the host or it is turned
/// off) asks `https://{host}/common/discovery/instance` for a Microsoft or loopback host, and
/// Microsoft's public cloud for any other host, which validates it: an unknown instance is
/// `authorityNotTrusted`.
public actor AuthorityResolver {
    private let transport: any HTTPTransport
    private let trust: AuthorityTrust
    private let metadataCache: MetadataCache
    /// The issuers' signing keys (ID token signatures of generic OpenID providers).
    nonisolated let signingKeys: SigningKeyCache
    private let persisted: PersistedDiscovery
    /// Host aliases known without a request, under a lock of their own (a ``PthreadMutex``,
    /// which ThreadSanitizer sees): the lookups that need no network (``cacheView(_:in:)``)
    /// answer without waiting for the actor.
    private let knownAliases = PthreadMutex(KnownAliases())

    private struct KnownAliases {
        var byName: [String: [String]] = [:]
        /// Hosts whose kept aliases were looked for (found or not): looked for once per process.
        var lookedUp: Set<String> = []
    }

    public init(transport: any HTTPTransport, trust: AuthorityTrust, persisted: PersistedDiscovery = PersistedDiscovery(cache: nil)) {
        self.transport = transport
        self.trust = trust
        self.persisted = persisted
        metadataCache = MetadataCache(transport: transport, persisted: persisted)
        signingKeys = SigningKeyCache(transport: transport, persisted: persisted)
    }

    /// What the cache needs for `authority`, with no network request and no further read of
    /// the cache: its environments and, when known, its metadata's realm (in memory, else kept
    /// in `document`). Checks trust that needs no network (a B2C host must be listed).
    public nonisolated func cacheView(_ authority: Authority, in document: CacheDocument) throws -> CacheView {
        _ = try trust.decide(authority)
        return CacheView(
            environments: environments(of: authority, in: document), metadataRealm: metadataCache.known(authority, in: document)?.realm)
    }

    public func resolve(_ authority: Authority) async throws -> ResolvedAuthority {
        let environments: [String]
        switch try trust.decide(authority) {
        case .trusted:
            environments = self.environments(of: authority)
        case .discover(let validates):
            environments = try await discoveredAliases(authority, validates: validates)
        }
        let metadata = try await metadataCache.metadata(for: authority)
        return ResolvedAuthority(authority: authority, metadata: metadata, environments: environments)
    }

    /// The authority's environments after instance discovery (validating the host, finding its
    /// aliases). An authority that shares no aliases (``Authority/sharesHostAliases``: a
    /// loopback host or another port) is validated only: whatever the answer names, its
    /// environment stays its own.
    private func discoveredAliases(_ authority: Authority, validates: Bool) async throws -> [String] {
        let shares = authority.sharesHostAliases
        let key = shares ? authority.host : authority.cacheEnvironment
        if let known = knownAliases.withLock({ $0.byName[key] }) ?? keptAliases(of: key) { return shares ? known : [key] }
        let askItself = !validates || authority.isLoopback
        let service = askItself ? authority.origin : "https://login.microsoftonline.com"
        let url =
            "\(service)/common/discovery/instance?"
            + FormEncoding.query([
                ("api-version", "1.1"), ("authorization_endpoint", "\(authority.url)/oauth2/v2.0/authorize"),
            ])
        let found: [String]
        do {
            let response = try await ServiceCall.send(HTTPRequest(url: url), over: transport)
            let json = try? JSONValue.parse(response.body)
            if response.status != 200, case let answer = OAuthErrorAnswer(error: json?["error"]?.stringValue, httpStatus: response.status),
                OAuthErrorClassifier.kind(of: answer, at: .instanceDiscovery) == .authorityNotTrusted
            {
                throw AuthError(
                    .authorityNotTrusted,
                    "instance discovery does not know \(authority.host); list it in knownAuthorities or set instanceDiscovery to false")
            }
            guard response.status == 200, let metadata = json?["metadata"]?.arrayValue else {
                throw AuthError(.serverError, "instance discovery answered HTTP \(response.status)")
            }
            found = shares ? Self.aliases(of: authority.host, in: metadata) : [key]
        } catch let error as AuthError where !validates && error.kind != .authorityNotTrusted {
            found = shares ? EnvironmentAliases.of(authority.host) : [key]  // a Microsoft host: the built-in aliases
        }
        remember(found)
        persisted.saveAliases(found, of: key)
        return found
    }

    /// The environments sharing an account's tokens with `environment`: a host's aliases
    /// (discovered or kept, else built in); an environment naming a port or an issuer's path,
    /// or a loopback host, alone.
    public nonisolated func aliases(of environment: String) -> [String] {
        Self.isAliasName(environment) ? aliasesKnownOffline(of: environment) : [environment]
    }

    /// The cache environments of `authority` known without a request: the host's aliases
    /// (discovered, or kept in `document` or the cache, else built in) when it shares them
    /// (``Authority/sharesHostAliases``), else its own environment alone (a generic OpenID
    /// provider's issuer, a loopback host, another port).
    public nonisolated func environments(of authority: Authority, in document: CacheDocument? = nil) -> [String] {
        authority.sharesHostAliases ? aliasesKnownOffline(of: authority.host, in: document) : [authority.cacheEnvironment]
    }

    private nonisolated func aliasesKnownOffline(of host: String, in document: CacheDocument? = nil) -> [String] {
        let host = host.lowercased()
        return knownAliases.withLock({ $0.byName[host] }) ?? keptAliases(of: host, in: document) ?? EnvironmentAliases.of(host)
    }

    /// Each of `names` is an alias of all of them.
    private nonisolated func remember(_ names: [String]) {
        knownAliases.withLock { known in
            for name in names { known.byName[name] = names }
        }
    }

    /// The aliases kept by an earlier process, in `document` (`nil`: the cache is read, once
    /// per process and host).
    private nonisolated func keptAliases(of host: String, in document: CacheDocument? = nil) -> [String]? {
        let host = host.lowercased()
        guard document != nil || knownAliases.withLock({ $0.lookedUp.insert(host).inserted }),
            let kept = persisted.aliases(of: host, in: document)?.filter({ $0 == host || Self.isAliasName($0) })
        else { return nil }
        remember(kept)
        return kept
    }

    /// The aliases of the metadata entry naming `host`, `host` first. Only host names on
    /// the default port count (`:443` dropped): a name with another port, or a loopback
    /// name, is another origin, never an alias.
    static func aliases(of host: String, in metadata: [JSONValue]) -> [String] {
        for entry in metadata {
            let names = (entry["aliases"]?.arrayValue ?? []).compactMap { $0.stringValue?.lowercased() }
                .map { $0.hasSuffix(":443") ? String($0.dropLast(4)) : $0 }
            if names.contains(host) { return [host] + names.filter { $0 != host && isAliasName($0) } }
        }
        return [host]
    }

    /// A name that can be an alias: a host name alone (no port, no path), not loopback.
    static func isAliasName(_ name: String) -> Bool {
        !name.contains(":") && !name.contains("/") && URLParts("https://\(name)")?.isLoopback == false
    }
}
