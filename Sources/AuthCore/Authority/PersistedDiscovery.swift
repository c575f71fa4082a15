import JSON
import Logging
import TokenCache

/// Discovery answers (an authority's OpenID metadata, a host's instance-discovery aliases)
/// kept in the token cache for 24 hours, so a fresh process resolves an authority it used
/// before without the network: a refresh then costs one request, the token request.
///
/// Records live under the cache document's `AuthSidecar.discovery` (see
/// ``TokenCache/discoveryRecord(_:)``) as `{"fetched_at": <Unix seconds>, ...}`. A record that
/// is missing, stale (older than ``lifetime``, or dated in the future), or does not parse is
/// ignored, and the answer fetched again. Failing to read or keep one is logged, never an
/// error: discovery works without it.
public struct PersistedDiscovery: Sendable {
    /// How long a kept answer is used.
    public static let lifetime: Int64 = 24 * 3600

    /// The discovery document members the auth core uses (the rest is not kept).
    static let metadataMembers = [
        "authorization_endpoint", "token_endpoint", "device_authorization_endpoint",
        "end_session_endpoint", "issuer", "jwks_uri",
    ]

    let cache: TokenCache?
    let clock: any AuthClock
    let logger: Logger

    /// Answers kept in `cache` (`nil`: nothing is kept).
    public init(cache: TokenCache?, clock: any AuthClock = SystemClock(), logger: Logger = Logger(label: "auth-sidecar.discovery")) {
        self.cache = cache
        self.clock = clock
        self.logger = logger
    }

    /// The kept metadata of `authority`, when fresh and valid (reads the cache).
    func metadata(for authority: Authority) -> OpenIDMetadata? {
        metadata(for: authority, in: stored(Self.metadataKey(authority)))
    }

    /// The kept metadata of `authority` in a cache document already read.
    func metadata(for authority: Authority, in document: CacheDocument) -> OpenIDMetadata? {
        metadata(for: authority, in: document.discoveryRecord(Self.metadataKey(authority)))
    }

    private func metadata(for authority: Authority, in record: JSONObject?) -> OpenIDMetadata? {
        guard let document = fresh(record)?["document"] else { return nil }
        return try? OpenIDMetadata(json: document, kind: authority.kind)
    }

    /// Keeps the members of a discovery `document` the auth core uses.
    func saveMetadata(_ document: JSONValue, for authority: Authority) {
        let kept = JSONObject(Self.metadataMembers.compactMap { name in document[name].map { (name, $0) } })
        save(["document": .object(kept)], forKey: Self.metadataKey(authority))
    }

    /// The kept aliases of `host`, when fresh (reads the cache).
    func aliases(of host: String) -> [String]? {
        aliases(of: host, in: stored(Self.aliasesKey(host)))
    }

    /// The kept aliases of `host` in a cache document already read.
    func aliases(of host: String, in document: CacheDocument) -> [String]? {
        aliases(of: host, in: document.discoveryRecord(Self.aliasesKey(host)))
    }

    private func aliases(of host: String, in record: JSONObject?) -> [String]? {
        guard let list = fresh(record)?["aliases"]?.arrayValue else { return nil }
        let names = list.compactMap(\.stringValue).map { $0.lowercased() }
        return names.contains(host.lowercased()) ? names : nil
    }

    /// Keeps the aliases found for `host`.
    func saveAliases(_ aliases: [String], of host: String) {
        save(["aliases": JSONValue(aliases)], forKey: Self.aliasesKey(host))
    }

    static func metadataKey(_ authority: Authority) -> String { "metadata \(authority.url.lowercased())" }

    static func aliasesKey(_ host: String) -> String { "aliases \(host.lowercased())" }

    private func stored(_ key: String) -> JSONObject? {
        guard let cache else { return nil }
        do { return try cache.discoveryRecord(key) } catch {
            logger.debug("kept discovery answer unreadable", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// `record` if it is fresh.
    private func fresh(_ record: JSONObject?) -> JSONObject? {
        guard let record, let fetched = record["fetched_at"]?.intValue else { return nil }
        let age = clock.now() - fetched
        return age >= 0 && age < Self.lifetime ? record : nil
    }

    private func save(_ payload: JSONObject, forKey key: String) {
        guard let cache else { return }
        var record = payload
        record["fetched_at"] = .int(clock.now())
        do { try cache.saveDiscoveryRecord(record, forKey: key) } catch {
            logger.warning("could not keep a discovery answer", metadata: ["error": "\(error)"])
        }
    }
}
