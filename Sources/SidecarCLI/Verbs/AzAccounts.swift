import Adapters
import JSON
import POSIXSupport
import Sidecar
import TokenCache

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The subscriptions the `az` shim keeps per account, as Azure CLI keeps them: listed from
/// Resource Manager (``AzResourceManager``; its endpoint the `armEndpoint` key, else the cloud's
/// for a known cloud's sign-in host) the first time an `az` command needs them after a sign-in
/// (`auth-sidecar login` drops the kept list: ``forget(_:account:)``) and on `az account list
/// --refresh`, and kept beside the token cache in
/// `azureProfile.ACCOUNT.json` (0600; azureProfile.json's `subscriptions`, ``AzSubscriptions``).
/// An account with none, or where Resource Manager is not known, is Azure CLI's tenant-level
/// account (`--allow-no-subscriptions`), as before.
struct AzAccounts {
    let session: VerbSession
    /// The signed-in account (`getCurrentAccount`'s).
    let account: JSONValue
    let tenantId: String
    let cloud: AzCloud
    /// Resource Manager's base URL; nil: no subscriptions here.
    let resourceManager: String?

    /// The current account's; `notLoggedIn` when no one is signed in.
    static func current(_ session: VerbSession) throws(AzShim.Failure) -> AzAccounts {
        let result = try AzShim.call(session, "getCurrentAccount", [:])
        guard let account = result["account"], let tenantId = account["tenantId"]?.stringValue else { throw AzShim.notLoggedIn }
        let authority = try AzShim.configuredAuthority(session)
        let environment = account["environment"]?.stringValue ?? ""
        return AzAccounts(
            session: session, account: account, tenantId: tenantId, cloud: AzCloud.forAuthority("https://" + environment),
            resourceManager: AzCloud.resourceManager(configured: session.sources.overrides.armEndpoint, authority: authority))
    }

    var username: String { VerbOutput.username(account) }

    /// The file kept for this account: beside a file cache; nil for a memory cache.
    var profilePath: String? { Self.profilePath(session, homeAccountId: account["homeAccountId"]?.stringValue ?? tenantId) }

    /// The file kept for the account `homeAccountId` in `session`'s cache's directory; nil for
    /// a memory cache.
    static func profilePath(_ session: VerbSession, homeAccountId: String) -> String? {
        layout(session)?.azProfile(account: homeAccountId)
    }

    /// The files beside `session`'s file cache; nil for a memory cache.
    static func layout(_ session: VerbSession) -> CacheFileLayout? {
        guard let cache = try? session.configuration["cache"]?["path"]?.stringValue, cache.contains("/") else { return nil }
        return CacheFileLayout(path: cache)
    }

    /// After a sign-in (`auth-sidecar login`): the account's kept subscriptions are dropped, so
    /// the next `az` command lists them again, as Azure CLI lists them at each `az login`.
    static func forget(_ session: VerbSession, account: JSONValue?) {
        guard let id = account?["homeAccountId"]?.stringValue, let path = profilePath(session, homeAccountId: id) else { return }
        unlink(path)
    }

    /// The account's subscriptions: the kept ones, else (or with `refresh`) listed now and
    /// kept. Empty: a tenant-level account. A listing that fails is an error with `refresh`;
    /// else the account is tenant-level, kept so (with one warning now) until `az account list
    /// --refresh` or the next sign-in: no az command waits on a failing Resource Manager again.
    func subscriptions(refresh: Bool = false) throws(AzShim.Failure) -> [JSONValue] {
        guard let resourceManager else { return [] }
        let kept = try read()
        if let kept, !refresh { return kept }
        switch list(resourceManager) {
        case .success(let entries):
            let previous = kept.flatMap(AzSubscriptions.defaultEntry)?["id"]?.stringValue
            let chosen = AzSubscriptions.withDefault(entries, previous: previous)
            try write(chosen)
            return chosen
        case .failure(let reason):
            if refresh { throw AzShim.Failure(message: "auth-sidecar: cannot list subscriptions: \(reason.reason)") }
            Console.write(
                "WARNING: auth-sidecar: cannot list subscriptions (\(reason.reason)): \(username) is a tenant-level account until "
                    + "'az account list --refresh'\n", to: STDERR_FILENO)
            try write([])
            return []
        }
    }

    /// `entries` kept as the account's subscriptions.
    func write(_ entries: [JSONValue]) throws(AzShim.Failure) {
        guard let layout = Self.layout(session), let path = profilePath else { return }
        let document: JSONValue = ["homeAccountId": account["homeAccountId"] ?? .null, "subscriptions": .array(entries)]
        // With the broker no cache file is written, so nothing else made the directory.
        do throws(TokenCacheError) { try layout.makeDirectory() } catch { throw AzShim.Failure(message: "auth-sidecar: \(error)") }
        do throws(VerbFailure) {
            try ProfileFileRewrite.replace(path, with: Array(AzOutput.json(document).utf8), mode: 0o600)
        } catch {
            throw AzShim.Failure(message: "auth-sidecar: \(error.message)")
        }
    }

    /// The kept subscriptions; nil when none are kept. A file that cannot be read is an error,
    /// never taken as none (fail closed).
    private func read() throws(AzShim.Failure) -> [JSONValue]? {
        guard let path = profilePath else { return nil }
        let bytes: [UInt8]?
        do { bytes = try POSIX.readOwnFile(path, limit: 4 << 20) } catch { throw AzShim.Failure(message: "auth-sidecar: \(error)") }
        guard let bytes else { return nil }
        guard let entries = (try? JSONValue.parse(bytes))?["subscriptions"]?.arrayValue else {
            throw AzShim.Failure(message: "auth-sidecar: \(path) is not a kept subscription list: remove it, then run 'az account list --refresh'")
        }
        return entries
    }

    /// Azure CLI's listing: the tenants with a Resource Manager token of the home tenant, then
    /// each tenant's subscriptions with a token of that tenant (a tenant whose token needs the
    /// user, as one asking for MFA, is left out, as az leaves it out).
    private func list(_ endpoint: String) -> Result<[JSONValue], AzResourceManager.Failure> {
        let scope = cloud.armResource + "/.default"
        guard let homeToken = token(scope, tenant: nil) else {
            return .failure(AzResourceManager.Failure("no Resource Manager token for \(username)"))
        }
        let tenants: [AzSubscriptions.Tenant]
        switch AzResourceManager.list(endpoint: endpoint, path: "tenants", token: homeToken) {
        case .failure(let reason): return .failure(reason)
        case .success(let items): tenants = AzSubscriptions.tenants(["value": .array(items)])
        }
        var entries: [JSONValue] = []
        for tenant in tenants {
            guard let token = tenant.id == tenantId ? homeToken : token(scope, tenant: tenant.id) else { continue }
            switch AzResourceManager.list(endpoint: endpoint, path: "subscriptions", token: token) {
            case .failure(let reason): return .failure(reason)
            case .success(let items):
                entries += AzSubscriptions.entries(["value": .array(items)], tenant: tenant, username: username, cloud: cloud)
            }
        }
        return .success(entries)
    }

    /// A token for `scope`, of `tenant` (nil: the account's own), acquired silently; nil when that fails.
    private func token(_ scope: String, tenant: String?) -> String? {
        var params: JSONObject = ["scopes": [.string(scope)]]
        if let tenant {
            guard let configured = try? AzShim.configuredAuthority(session), let authority = VerbRequests.authority(configured, tenant: tenant)
            else { return nil }
            params["authority"] = .string(authority)
        }
        return (try? AzShim.call(session, "acquireTokenSilent", .object(params)))?["accessToken"]?.stringValue
    }
}
