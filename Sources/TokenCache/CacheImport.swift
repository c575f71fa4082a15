/// A read-only import of another MSAL application's sign-ins into an empty cache (Azure CLI's
/// `msal_token_cache.json`, azure-identity's Secret Service item): what may move, decided from
/// the source document alone; the source is never written.
///
/// The rules, one place:
/// - **Only our authority's environments** (`environments`: the configured authority's cache
///   environment, and for a Microsoft cloud its built-in aliases): a token never moves towards
///   a host that did not issue it.
/// - **Refresh tokens our client can use**: its own (same client id), or a family (FOCI)
///   token (`family_id` set), kept as it is (the other client's id and family). The silent
///   flow tries a family token when the client has no token of its own and its family status
///   is unknown, as MSAL does: it works when our client id is in the family (Microsoft's
///   first-party clients, e.g. Azure CLI's own `04b07795-8ddb-461a-bbee-02f9e1bf7b46`), else
///   the service answers `client_mismatch` once and the user is asked to sign in.
/// - **The accounts those tokens belong to**, with their ID tokens (for the account list and
///   the tenant) and the app metadata of the clients whose family tokens are imported.
/// - No access token: they were issued to the other client.
public struct CacheImport: Sendable, Equatable {
    public private(set) var accounts: [CachedAccount] = []
    public private(set) var refreshTokens: [CachedRefreshToken] = []
    public private(set) var idTokens: [CachedIdToken] = []
    public private(set) var appMetadata: [AppMetadata] = []

    /// What `source` offers a client `clientId` of an authority with `environments`.
    public init(from source: CacheDocument, environments: [String], clientId: String) {
        refreshTokens = source.all(source.refreshTokens).map(\.entity).filter {
            environments.containsEnvironment($0.environment)
                && ($0.clientId.equalsIgnoringCase(clientId) || !($0.familyId ?? "").isEmpty)
        }
        let homes = Set(refreshTokens.map { $0.homeAccountId.lowercased() })
        accounts = source.all(source.accounts).map(\.entity).filter {
            homes.contains($0.homeAccountId.lowercased()) && environments.containsEnvironment($0.environment)
        }
        let imported = Set(accounts.map { $0.homeAccountId.lowercased() })
        refreshTokens.removeAll { !imported.contains($0.homeAccountId.lowercased()) }  // no token without its account
        idTokens = source.all(source.idTokens).map(\.entity).filter {
            imported.contains($0.homeAccountId.lowercased()) && environments.containsEnvironment($0.environment)
        }
        let clients = Set(refreshTokens.map { $0.clientId.lowercased() })
        appMetadata = source.all(source.appMetadata).map(\.entity).filter {
            clients.contains($0.clientId.lowercased()) && environments.containsEnvironment($0.environment)
        }
    }

    /// The usernames of the accounts imported, each once, in the source's order.
    public var usernames: [String] {
        var seen = Set<String>()
        return accounts.map(\.username).filter { seen.insert($0.lowercased()).inserted }
    }

    public var isEmpty: Bool { accounts.isEmpty }
}

extension CacheDocument {
    /// Whether the cache holds no account and no token (an import may fill it).
    public var isEmptyOfSignIns: Bool {
        all(accounts).isEmpty && all(refreshTokens).isEmpty && all(accessTokens).isEmpty && all(idTokens).isEmpty
    }

    /// Adds what `plan` carries (entries under the same keys as in the source).
    public mutating func apply(_ plan: CacheImport) {
        guard !plan.isEmpty else { return }
        change(\.accounts) { section, tree in for entity in plan.accounts { section.upsert(entity, in: tree) } }
        change(\.refreshTokens) { section, tree in for entity in plan.refreshTokens { section.upsert(entity, in: tree) } }
        change(\.idTokens) { section, tree in for entity in plan.idTokens { section.upsert(entity, in: tree) } }
        change(\.appMetadata) { section, tree in for entity in plan.appMetadata { section.upsert(entity, in: tree) } }
        touch()
    }
}
