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
/// account (`--allow-no-subscriptions`), as before. A listing that failed is tried again by a
/// later `az` call once its back-off has passed (``ListingFailure``), in a process of its own
/// that the call does not wait for (``retryInBackground()``).
public struct AzAccounts {
    let session: any AzEngine
    /// The signed-in account (`getCurrentAccount`'s).
    let account: JSONValue
    let tenantId: String
    let cloud: AzCloud
    /// Resource Manager's base URL; nil: no subscriptions here.
    let resourceManager: String?

    /// The current account's; `notLoggedIn` when no one is signed in.
    static func current(_ session: any AzEngine) throws(AzShim.Failure) -> AzAccounts {
        let account = try AzShim.call(session, GetCurrentAccountRequest()).account
        guard let tenantId = account["tenantId"]?.stringValue else { throw AzShim.notLoggedIn }
        let authority = try AzShim.configuredAuthority(session)
        let environment = account["environment"]?.stringValue ?? ""
        return AzAccounts(
            session: session, account: account, tenantId: tenantId, cloud: AzCloud.forAuthority("https://" + environment),
            resourceManager: AzCloud.resourceManager(configured: session.armEndpoint, authority: authority))
    }

    var username: String { session.username(account) }

    /// The file kept for this account: beside a file cache; nil for a memory cache.
    var profilePath: String? {
        Self.profilePath(
            cachePath: try? session.configuration()["cache"]?["path"]?.stringValue, homeAccountId: account["homeAccountId"]?.stringValue ?? tenantId)
    }

    /// The file kept for the account `homeAccountId` beside the cache file `cachePath`; nil
    /// for a memory cache (no path).
    static func profilePath(cachePath cache: String?, homeAccountId: String) -> String? {
        layout(cachePath: cache)?.azProfile(account: homeAccountId)
    }

    /// The files beside the cache file `cachePath`; nil for a memory cache (no path).
    static func layout(cachePath cache: String?) -> CacheFileLayout? {
        guard let cache, cache.contains("/") else { return nil }
        return CacheFileLayout(path: cache)
    }

    /// After a sign-in (`auth-sidecar login`): the account's kept subscriptions are dropped, so
    /// the next `az` command lists them again, as Azure CLI lists them at each `az login`.
    public static func forget(cachePath: String?, account: JSONValue?) {
        guard let id = account?["homeAccountId"]?.stringValue, let path = profilePath(cachePath: cachePath, homeAccountId: id) else { return }
        unlink(path)
    }

    /// The account's subscriptions: the kept ones, else (or with `refresh`) listed now and
    /// kept. Empty: a tenant-level account. A listing that fails is an error with `refresh`;
    /// else the account is tenant-level (with one warning now), kept so with the failure noted:
    /// a later call past the back-off starts the listing again in the background and answers
    /// at once (``retryInBackground()``), until one succeeds, `az account list --refresh` or
    /// the next sign-in. No az command waits on a failing Resource Manager again.
    func subscriptions(refresh: Bool = false) throws(AzShim.Failure) -> [JSONValue] {
        guard let resourceManager else { return [] }
        let kept = try read()
        if let kept, !refresh {
            if let failure = kept.failure, failure.retryAfter <= Self.now() { retryInBackground(after: failure) }
            return kept.entries
        }
        switch list(resourceManager) {
        case .success(let entries):
            let previous = kept.flatMap { AzSubscriptions.defaultEntry($0.entries) }?["id"]?.stringValue
            let chosen = AzSubscriptions.withDefault(entries, previous: previous)
            try write(chosen)
            return chosen
        case .failure(let reason):
            if refresh { throw AzShim.Failure(message: "auth-sidecar: cannot list subscriptions: \(reason.reason)") }
            AzConsole.write(
                "WARNING: auth-sidecar: cannot list subscriptions (\(reason.reason)): \(username) is a tenant-level account until "
                    + "a later az call lists them (tried again in the background) or 'az account list --refresh'\n",
                to: STDERR_FILENO)
            try write([], failure: ListingFailure(attempts: 1, retryAfter: Self.now() + ListingFailure.delay(after: 1)))
            return []
        }
    }

    /// A failed listing, kept in the profile (`listingFailed`): how many tries failed, and
    /// when a later `az` call may try again (5 s after the first, doubling, at most an hour).
    struct ListingFailure {
        var attempts: Int
        /// Unix seconds.
        var retryAfter: Int64

        static func delay(after attempts: Int) -> Int64 { min(5 << Int64(min(max(attempts, 1), 12) - 1), 3600) }

        var json: JSONValue { ["attempts": .int(Int64(attempts)), "retryAfter": .int(retryAfter)] }

        init(attempts: Int, retryAfter: Int64) {
            self.attempts = attempts
            self.retryAfter = retryAfter
        }

        init?(_ json: JSONValue?) {
            guard let attempts = json?["attempts"]?.intValue, let retryAfter = json?["retryAfter"]?.intValue else { return nil }
            self.init(attempts: Int(clamping: attempts), retryAfter: retryAfter)
        }
    }

    /// The argument (after `az`) of the process that lists again in the background.
    static let retryArgument = "--auth-sidecar-retry-listing"

    /// Claims the retry (the next one a back-off later, so concurrent calls start one between
    /// them), then starts `auth-sidecar az --auth-sidecar-retry-listing` in a session of its
    /// own, its stdin, stdout and stderr /dev/null (a caller reading this process's output to
    /// the end does not wait for it); it lists (each request within `httpTimeoutSeconds`) and
    /// keeps what it found (``retryListing()``). This call does not wait for it.
    private func retryInBackground(after failure: ListingFailure) {
        let attempts = failure.attempts + 1
        let claimed = ListingFailure(attempts: attempts, retryAfter: Self.now() + ListingFailure.delay(after: attempts))
        guard (try? write([], failure: claimed)) != nil else { return }
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { return }
        defer { close(null) }
        _ = POSIX.spawn(["/proc/self/exe", "az", Self.retryArgument], stdout: null, stderr: null, newSession: true)
    }

    /// The background retry's work: lists, and keeps the subscriptions when that succeeds;
    /// on a failure the kept back-off stands. Returns the exit status.
    func retryListing() -> Int32 {
        guard let resourceManager, case .success(let entries) = list(resourceManager) else { return 1 }
        guard (try? write(AzSubscriptions.withDefault(entries, previous: nil))) != nil else { return 1 }
        return 0
    }

    private static func now() -> Int64 { Int64(time(nil)) }

    /// `entries` kept as the account's subscriptions, with the failed listing when there is one.
    func write(_ entries: [JSONValue], failure: ListingFailure? = nil) throws(AzShim.Failure) {
        guard let path = profilePath, let layout = Self.layout(cachePath: try? session.configuration()["cache"]?["path"]?.stringValue)
        else { return }
        // With the broker no cache file is written, so nothing else made the directory.
        do throws(TokenCacheError) { try layout.makeDirectory() } catch { throw AzShim.Failure(message: "auth-sidecar: \(error)") }
        var document: JSONObject = ["homeAccountId": account["homeAccountId"] ?? .null, "subscriptions": .array(entries)]
        if let failure { document["listingFailed"] = failure.json }
        try session.replaceFile(path, with: Array(AzOutput.json(.object(document)).utf8), mode: 0o600)
    }

    /// The kept subscriptions and failed listing; nil when none are kept. A file that cannot
    /// be read is an error, never taken as none (fail closed).
    private func read() throws(AzShim.Failure) -> (entries: [JSONValue], failure: ListingFailure?)? {
        guard let path = profilePath else { return nil }
        let bytes: [UInt8]?
        do { bytes = try POSIX.readOwnFile(path, limit: 64 << 20) } catch { throw AzShim.Failure(message: "auth-sidecar: \(error)") }
        guard let bytes else { return nil }
        guard let document = try? JSONValue.parse(bytes), let entries = document["subscriptions"]?.arrayValue else {
            throw AzShim.Failure(message: "auth-sidecar: \(path) is not a kept subscription list: remove it, then run 'az account list --refresh'")
        }
        return (entries, ListingFailure(document["listingFailed"]))
    }

    /// Azure CLI's listing: the tenants with a Resource Manager token of the home tenant, then
    /// each tenant's subscriptions with a token of that tenant (a tenant whose token needs the
    /// user, as one asking for MFA, is left out, as az leaves it out).
    private func list(_ endpoint: String) -> Result<[JSONValue], AzResourceManager.Failure> {
        let scope = cloud.armResource + "/.default"
        guard let homeToken = token(scope, tenant: nil) else {
            return .failure(AzResourceManager.Failure("no Resource Manager token for \(username)"))
        }
        let timeout = (try? session.configuration()["httpTimeoutSeconds"]?.intValue) ?? 30
        let manager = AzResourceManager(endpoint: endpoint, timeoutSeconds: Int(clamping: timeout))
        let tenants: [AzSubscriptions.Tenant]
        switch manager.list(path: "tenants", token: homeToken) {
        case .failure(let reason): return .failure(reason)
        case .success(let items): tenants = AzSubscriptions.tenants(["value": .array(items)])
        }
        var entries: [JSONValue] = []
        for tenant in tenants {
            guard let token = tenant.id == tenantId ? homeToken : token(scope, tenant: tenant.id) else { continue }
            switch manager.list(path: "subscriptions", token: token) {
            case .failure(let reason): return .failure(reason)
            case .success(let items):
                entries += AzSubscriptions.entries(["value": .array(items)], tenant: tenant, username: username, cloud: cloud)
            }
        }
        return .success(entries)
    }

    /// A token for `scope`, of `tenant` (nil: the account's own), acquired silently; nil when that fails.
    private func token(_ scope: String, tenant: String?) -> String? {
        var request = AcquireTokenSilentRequest(scopes: [scope])
        if let tenant {
            guard let configured = try? AzShim.configuredAuthority(session), let authority = session.authority(configured, tenant: tenant)
            else { return nil }
            request.authority = authority
        }
        return (try? AzShim.call(session, request))?.accessToken
    }
}
