import Adapters
import JSON
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The shim's subscription commands (``AzAccounts``): `account show` and `get-access-token`
/// for a subscription, `account list` and `account set`; and `az login --claims-challenge`.
extension AzShim {
    /// The subscription a `get-access-token` is for (`--subscription`, else the default) and
    /// the authority of its tenant when that is not the account's own; nil with `--tenant`, or
    /// for a tenant-level account (no subscriptions kept, or Resource Manager not known).
    static func subscription(
        for request: AzCommandLine.GetAccessToken, configured: String, _ session: any AzEngine
    ) throws(Failure) -> (entry: JSONValue, authority: String?)? {
        guard request.tenant == nil, AzCloud.resourceManager(configured: session.armEndpoint, authority: configured) != nil
        else { return nil }
        let accounts = try AzAccounts.current(session)
        let entries = try accounts.subscriptions()
        guard !entries.isEmpty else { return nil }
        guard let entry = try chosen(request.subscription, in: entries) else { return nil }
        guard let tenant = entry["tenantId"]?.stringValue, tenant.lowercased() != accounts.tenantId.lowercased() else { return (entry, nil) }
        return (entry, session.authority(configured, tenant: tenant))
    }

    /// `account show` of a kept subscription (`--subscription`, else the default); nil for a
    /// tenant-level account.
    static func subscriptionShown(_ subscription: String?, _ output: AzOutputOptions, _ session: any AzEngine) throws(Failure) -> String? {
        let configured = try configuredAuthority(session)
        guard AzCloud.resourceManager(configured: session.armEndpoint, authority: configured) != nil else { return nil }
        let entries = try AzAccounts.current(session).subscriptions()
        guard !entries.isEmpty, let entry = try chosen(subscription, in: entries) else { return nil }
        return AzOutput.render(entry, output)
    }

    /// The entry `asked` names, else the default; az's error when it names none.
    private static func chosen(_ asked: String?, in entries: [JSONValue]) throws(Failure) -> JSONValue? {
        guard let asked else { return AzSubscriptions.defaultEntry(entries) }
        guard let entry = AzSubscriptions.find(asked, in: entries) else { throw Failure(message: AzResults.subscriptionNotFound(asked)) }
        return entry
    }

    /// `account list [--all] [--refresh]`: the kept subscriptions (`cloudName` for
    /// `environmentName`), or the tenant-level account; `[]` and az's warning when no one is
    /// signed in.
    static func accountList(all: Bool, refresh: Bool, _ output: AzOutputOptions, _ session: any AzEngine) throws(Failure) -> String {
        let accounts: AzAccounts
        do throws(Failure) { accounts = try AzAccounts.current(session) } catch  where error.message == notLoggedIn.message {
            AzConsole.write("WARNING: Please run \"az login\" to access your accounts.\n", to: STDERR_FILENO)
            return AzOutput.render([], output)
        }
        if refresh, accounts.resourceManager == nil {
            throw Failure(message: "auth-sidecar: no Resource Manager for this authority: set armEndpoint to list subscriptions")
        }
        var entries = try accounts.subscriptions(refresh: refresh)
        if entries.isEmpty {
            entries = [AzResults.account(username: accounts.username, tenantId: accounts.tenantId, cloud: accounts.cloud)]
        }
        let listed = AzSubscriptions.listed(entries, all: all)
        if listed.count != entries.count {
            AzConsole.write(
                "WARNING: A few accounts are skipped as they don't have 'Enabled' state. Use '--all' to display them.\n",
                to: STDERR_FILENO)
        }
        return AzOutput.render(.array(listed), output, table: AzSubscriptions.tableRows)
    }

    /// `account set --subscription ID|NAME`: that subscription becomes the default; nothing printed.
    static func accountSet(_ subscription: String, _ session: any AzEngine) throws(Failure) -> String {
        let accounts = try AzAccounts.current(session)
        let entries = try accounts.subscriptions()
        if entries.isEmpty, AzResults.names(subscription, tenantId: accounts.tenantId) { return "" }
        guard let entry = AzSubscriptions.find(subscription, in: entries), let id = entry["id"]?.stringValue else {
            throw Failure(message: AzSubscriptions.setNotFound(subscription, cloud: accounts.cloud))
        }
        try accounts.write(
            entries.map { item in
                guard case .object(var object) = item else { return item }
                object["isDefault"] = .bool(object["id"]?.stringValue == id)
                return .object(object)
            })
        return ""
    }

    /// `az login --claims-challenge B64 [--tenant T] [--scope S]`: this binary's `login` with
    /// those claims, in place of this process (the sign-in's way picked as for any `login`).
    static func runLogin(_ login: AzCommandLine.LoginWithClaims) -> Int32 {
        var arguments = ["auth-sidecar", "login", "--claims-challenge", login.claimsChallenge]
        if let tenant = login.tenant { arguments += ["--tenant", tenant] }
        for scope in login.scopes { arguments += ["--scope", scope] }
        let argv = arguments.map { strdup($0) } + [nil]
        execv("/proc/self/exe", argv)
        let reason = String(cString: strerror(errno))
        for pointer in argv { free(pointer) }
        AzConsole.write("ERROR: cannot run auth-sidecar login: \(reason)\n", to: STDERR_FILENO)
        return 1
    }
}
