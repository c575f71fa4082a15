import JSON
import Synchronization
import TokenCache

/// The accounts in the cache, as ``Account`` values, and the current account.
///
/// Resolving an account reads only that account's entries (the cache's indexes by home
/// account ID and username), whatever the number of accounts: this is on every silent
/// request's path. Listing (``all(username:)``) reads them all.
struct AccountDirectory: Sendable {
    let configuration: ClientConfiguration
    let cache: TokenCache
    /// The configured authority's environments (its host and aliases, or its own origin or issuer).
    let environments: [String]

    /// The accounts of this cloud, one per home account (its home-tenant profile first).
    func all(username: String? = nil) throws -> [Account] {
        try CacheAccess.run { try cache.read { list(username: username, in: $0) } }
    }

    private func list(username: String?, in document: CacheDocument) -> [Account] {
        let cached = username.map(document.accounts(username:)) ?? document.accountList()
        var seen = Set<String>()
        return cached.filter { environments.containsEnvironment($0.environment) }
            .sorted { isHomeProfile($0) && !isHomeProfile($1) }
            .filter { seen.insert($0.homeAccountId.lowercased()).inserted }
            .map { account($0, in: document) }
    }

    /// ``all(username:)`` with each account's tenants and whether it is the current account.
    func listing(username: String? = nil) throws -> [ListedAccount] {
        try CacheAccess.run {
            try cache.read { document in
                let current = current(in: document)?.homeAccountId.lowercased()
                return list(username: username, in: document).map { account in
                    ListedAccount(
                        account: account, tenants: AccountTenants.of(account, environments: environments, in: document),
                        isCurrent: account.homeAccountId.lowercased() == current)
                }
            }
        }
    }

    /// The account a request names; `nil` reference: the current account.
    func resolve(_ reference: AccountReference?) throws -> Account? {
        try CacheAccess.run { try cache.read { try resolve(reference, in: $0) } }
    }

    /// ``resolve(_:)`` on a document already read.
    func resolve(_ reference: AccountReference?, in document: CacheDocument) throws(AuthError) -> Account? {
        switch reference {
        case .homeAccountId(let id)?:
            return preferred(document.accounts(homeAccountId: id)).map { account($0, in: document) }
        case .username(let name)?:
            let matches = document.accounts(username: name).filter { environments.containsEnvironment($0.environment) }
            if Set(matches.map { $0.homeAccountId.lowercased() }).count > 1 {
                throw AuthError(.ambiguousAccount, "several accounts have the username \(name); name one by homeAccountId")
            }
            return preferred(matches).map { account($0, in: document) }
        case nil:
            return current(in: document)
        }
    }

    /// The account marked current; else, when the cache holds exactly one account, that one.
    func current() throws -> Account? {
        try CacheAccess.run { try cache.read { current(in: $0) } }
    }

    /// ``current()`` on a document already read.
    func current(in document: CacheDocument) -> Account? {
        if let id = document.currentAccountId(clientId: configuration.clientId) {
            return preferred(document.accounts(homeAccountId: id)).map { account($0, in: document) }
        }
        let homes = document.homeAccountIds(environments: environments, limit: 2)
        guard homes.count == 1 else { return nil }
        return preferred(document.accounts(homeAccountId: homes[0])).map { account($0, in: document) }
    }

    /// Of one home account's entities, the one of this cloud to show: its home-tenant profile
    /// first.
    private func preferred(_ entities: [CachedAccount]) -> CachedAccount? {
        let mine = entities.filter { environments.containsEnvironment($0.environment) }
        return mine.first(where: isHomeProfile) ?? mine.first
    }

    /// Marks the current account; a sign-in also forgets any signed-out account not yet reported.
    func setCurrent(_ account: Account?) throws {
        try CacheAccess.run {
            try cache.setCurrentAccountId(account?.homeAccountId, clientId: configuration.clientId)
            if account != nil { try cache.setSignedOutAccount(nil, clientId: configuration.clientId) }
        }
    }

    /// Remembers the current account just signed out, for the next `getCurrentAccount`.
    func recordSignedOut(_ account: Account) throws {
        try CacheAccess.run { try cache.setSignedOutAccount(account.snapshot, clientId: configuration.clientId) }
    }

    /// The signed-out account not yet reported (by any process), forgetting it.
    func takeSignedOut() throws -> Account? {
        try CacheAccess.run { try cache.takeSignedOutAccount(clientId: configuration.clientId) }.flatMap(Account.init(snapshot:))
    }

    private func isHomeProfile(_ account: CachedAccount) -> Bool {
        account.homeAccountId.utf8.split(separator: UInt8(ascii: ".")).last.map { String(Substring($0)).lowercased() } == account.realm.lowercased()
    }

    /// An ``Account`` with the ID token's claims when one is cached.
    func account(_ cached: CachedAccount, in document: CacheDocument) -> Account {
        let idToken = document.idToken(
            homeAccountId: cached.homeAccountId, environments: environments,
            realm: cached.realm, clientId: configuration.clientId)
        let claims = idToken.flatMap { try? IDToken.claims(of: $0.secret) }
        return Account(
            homeAccountId: cached.homeAccountId, localAccountId: cached.localAccountId,
            environment: cached.environment,
            tenantId: claims?["tid"]?.stringValue ?? cached.realm, username: cached.username,
            name: cached.name ?? claims?["name"]?.stringValue, idTokenClaims: claims)
    }
}
