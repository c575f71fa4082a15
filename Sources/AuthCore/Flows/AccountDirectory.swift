import JSON
import Synchronization
import TokenCache

/// The accounts in the cache, as ``Account`` values, and the current account.
struct AccountDirectory: Sendable {
    let configuration: ClientConfiguration
    let cache: TokenCache
    /// The configured authority's host and its aliases.
    let environments: [String]

    /// The accounts of this cloud, one per home account (its home-tenant profile first).
    func all(username: String? = nil) throws -> [Account] {
        try entries(username: username).map(account)
    }

    /// The account a request names; `nil` reference: the current account. Only the chosen
    /// entry is turned into an ``Account`` (one ID-token read, not one per cached account:
    /// this is on every silent request's path).
    func resolve(_ reference: AccountReference?) throws -> Account? {
        switch reference {
        case .homeAccountId(let id)?:
            return try entries().first { $0.homeAccountId.lowercased() == id.lowercased() }.map(account)
        case .username(let name)?:
            let matches = try entries(username: name)
            if matches.count > 1 {
                throw AuthError(.ambiguousAccount, "several accounts have the username \(name); name one by homeAccountId")
            }
            return try matches.first.map(account)
        case nil:
            return try current()
        }
    }

    /// The account marked current; else, when the cache holds exactly one account, that one.
    func current() throws -> Account? {
        let accounts = try entries()
        if let id = try CacheAccess.run({ try cache.currentAccountId(clientId: configuration.clientId) }) {
            return try accounts.first { $0.homeAccountId.lowercased() == id.lowercased() }.map(account)
        }
        return accounts.count == 1 ? try account(accounts[0]) : nil
    }

    /// The cached account entries of this cloud, one per home account (home tenant first).
    private func entries(username: String? = nil) throws -> [CachedAccount] {
        let cached = try CacheAccess.run {
            try username.map { try cache.accounts(username: $0) } ?? cache.accounts()
        }
        var seen = Set<String>()
        return cached.filter { environments.contains($0.environment.lowercased()) }
            .sorted { isHomeProfile($0) && !isHomeProfile($1) }
            .filter { seen.insert($0.homeAccountId.lowercased()).inserted }
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
        account.homeAccountId.split(separator: ".").last.map { String($0).lowercased() } == account.realm.lowercased()
    }

    /// An ``Account`` with the ID token's claims when one is cached.
    func account(_ cached: CachedAccount) throws -> Account {
        let idToken = try CacheAccess.run {
            try cache.idToken(homeAccountId: cached.homeAccountId, environments: environments,
                              realm: cached.realm, clientId: configuration.clientId)
        }
        let claims = idToken.flatMap { try? IDToken(raw: $0.secret) }?.claims
        return Account(homeAccountId: cached.homeAccountId, localAccountId: cached.localAccountId,
                       environment: cached.environment,
                       tenantId: claims?["tid"]?.stringValue ?? cached.realm, username: cached.username,
                       name: cached.name ?? claims?["name"]?.stringValue, idTokenClaims: claims)
    }
}

/// What `getCurrentAccount` last reported in this process, to tell a change.
final class CurrentAccountTracker: Sendable {
    private let last = Mutex<Account?>(nil)

    /// Records `current`; returns the previously known account when it differs.
    func update(_ current: Account?) -> Account? {
        last.withLock { last in
            defer { last = current }
            return last?.homeAccountId != current?.homeAccountId ? last : nil
        }
    }

    /// Notes the account a sign-in made current (without reporting a change).
    func note(_ account: Account) {
        last.withLock { $0 = account }
    }
}
