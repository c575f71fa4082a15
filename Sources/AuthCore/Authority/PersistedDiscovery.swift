import AuthSeams
import JSON
import Logging
import TokenCache

/// Discovery answers (an authority's OpenID metadata, a host's instance-discovery aliases,
/// an issuer's signing keys) kept in the token cache for 24 hours, so a fresh process resolves an authority it used
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

    /// The kept metadata of `authority`, when fresh and valid, in `document` (`nil`: the
    /// cache is read).
    func metadata(for authority: Authority, in document: CacheDocument? = nil) -> OpenIDMetadata? {
        guard let kept = fresh(Self.metadataKey(authority), in: document)?["document"] else { return nil }
        return try? OpenIDMetadata(json: kept, kind: authority.kind)
    }

    /// Keeps the members of a discovery `document` the auth core uses.
    func saveMetadata(_ document: JSONValue, for authority: Authority) {
        let kept = JSONObject(Self.metadataMembers.compactMap { name in document[name].map { (name, $0) } })
        save(["document": .object(kept)], forKey: Self.metadataKey(authority))
    }

    /// The kept aliases of `host`, when fresh, in `document` (`nil`: the cache is read).
    func aliases(of host: String, in document: CacheDocument? = nil) -> [String]? {
        guard let list = fresh(Self.aliasesKey(host), in: document)?["aliases"]?.arrayValue else { return nil }
        let names = list.compactMap(\.stringValue).map { $0.lowercased() }
        return names.contains(host.lowercased()) ? names : nil
    }

    /// Keeps the aliases found for `host`, under each of them (a process configured with
    /// an alias finds them too).
    func saveAliases(_ aliases: [String], of host: String) {
        let hosts = Set(aliases.map { $0.lowercased() } + [host.lowercased()])
        save(["aliases": JSONValue(aliases)], forKeys: hosts.sorted().map(Self.aliasesKey))
    }

    /// The kept signing keys published at `uri`, when fresh.
    func signingKeys(at uri: String) -> SigningKeys? {
        fresh(Self.signingKeysKey(uri), in: nil)?["jwks"].flatMap(SigningKeys.init)
    }

    /// Keeps a JWK Set fetched from `uri`.
    func saveSigningKeys(_ jwks: JSONValue, at uri: String) {
        save(["jwks": jwks], forKey: Self.signingKeysKey(uri))
    }

    static func signingKeysKey(_ uri: String) -> String { "jwks \(uri)" }

    /// The kept metadata's key: ``Authority/key`` (a generic issuer's path as it is).
    static func metadataKey(_ authority: Authority) -> String { "metadata \(authority.key)" }

    static func aliasesKey(_ host: String) -> String { "aliases \(host.lowercased())" }

    /// The record under `key` in `document` (else in the cache), if it is fresh.
    private func fresh(_ key: String, in document: CacheDocument?) -> JSONObject? {
        let record: JSONObject?
        if let document {
            record = document.discoveryRecord(key)
        } else {
            guard let cache else { return nil }
            do { record = try cache.discoveryRecord(key) } catch {
                logger.debug("kept discovery answer unreadable", metadata: ["error": "\(error)"])
                return nil
            }
        }
        guard let record, let fetched = record["fetched_at"]?.intValue else { return nil }
        let age = clock.now() - fetched
        return age >= 0 && age < Self.lifetime ? record : nil
    }

    private func save(_ payload: JSONObject, forKey key: String) {
        save(payload, forKeys: [key])
    }

    private func save(_ payload: JSONObject, forKeys keys: [String]) {
        guard let cache else { return }
        var record = payload
        record["fetched_at"] = .int(clock.now())
        do { try cache.saveDiscoveryRecord(record, forKeys: keys) } catch {
            logger.warning("could not keep a discovery answer", metadata: ["error": "\(error)"])
        }
    }
}
