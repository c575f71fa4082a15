import Adapters
import JSON
import JSONRPC
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `az` entry point: started as `az` (a link to this binary) or as `auth-sidecar az ...`,
/// it answers `az account get-access-token` and `az account show` (and, in
/// `AzShim+Accounts.swift`, `account list`, `account set`, `version` and `login
/// --claims-challenge`) the way Azure CLI prints them (``AzCommandLine``, ``AzResults``,
/// ``AzOutput``, ``AzSubscriptions``), from the agent when one runs, else
/// an engine in this process. Messages go to stderr as az's (`ERROR: ...`), with az's exit
/// statuses: 0, 1 for a failure (no one signed in included: "Please run 'az login'", which
/// azure-identity turns into `CredentialUnavailableError`), 2 for a usage error or a command
/// not answered here (or, with `azPassthrough`, that command run by the real Azure CLI further
/// down `PATH`: ``AzPassthrough``). Never a refresh token; the access token only on stdout.
public enum AzShim {
    /// The az line, when this process was started as `az` (`programName`'s last component) or
    /// as `auth-sidecar az ...`; nil otherwise.
    public static func arguments(programName: String?, _ arguments: [String]) -> [String]? {
        if let programName, programName.utf8.reversed().prefix(while: { $0 != UInt8(ascii: "/") }).elementsEqual("za".utf8) {
            return arguments  // the last path component is `az`
        }
        if arguments.first == "az" { return Array(arguments.dropFirst()) }
        return nil
    }

    /// Answers the line over `host`'s engine; returns the exit status.
    public static func run(_ arguments: [String], host: any AzHost) -> Int32 {
        if arguments == [AzAccounts.retryArgument] { return retryListing(host) }
        switch AzCommandLine.parse(arguments) {
        case .failure(let failure):
            return fail(failure.description, status: AzCommandLine.usageStatus)
        case .success(.help(let text)):
            AzConsole.write(text, to: STDOUT_FILENO)
            return 0
        case .success(.other(let words)):
            if host.passthroughEnabled {
                if let loop = AzPassthrough.loopMessage(words) { return fail(loop, status: AzCommandLine.usageStatus) }
                guard let real = AzPassthrough.realAz(path: ProcessEnvironment.value("PATH")) else {
                    return fail(
                        "'az \(words.joined(separator: " "))' is not answered by this az, auth-sidecar's shim, and azPassthrough "
                            + "found no other az on PATH: install the real Azure CLI", status: AzCommandLine.usageStatus)
                }
                return AzPassthrough.exec(real, arguments)
            }
            return fail(
                "'az \(words.joined(separator: " "))' is not answered by this az, auth-sidecar's shim (it answers 'az account "
                    + "get-access-token', 'az account show', 'az account list', 'az account set', 'az version' and 'az login "
                    + "--claims-challenge'): run the real Azure CLI for it",
                status: AzCommandLine.usageStatus)
        case .success(.getAccessToken(let request, let output)):
            return answer(host) { session throws(Failure) in try getAccessToken(request, output, session) }
        case .success(.accountShow(let subscription, let output)):
            return answer(host) { session throws(Failure) in try accountShow(subscription, output, session) }
        case .success(.version(let output)):
            AzConsole.write(AzOutput.render(AzVersion.result(sidecarVersion: ServerInfo.version), output), to: STDOUT_FILENO)
            return 0
        case .success(.accountList(let all, let refresh, let output)):
            return answer(host) { session throws(Failure) in try accountList(all: all, refresh: refresh, output, session) }
        case .success(.accountSet(let subscription)):
            return answer(host) { session throws(Failure) in try accountSet(subscription, session) }
        case .success(.loginWithClaims(let login)):
            return runLogin(login)
        }
    }

    /// The background retry of a failed subscription listing (``AzAccounts/retryListing()``).
    private static func retryListing(_ host: any AzHost) -> Int32 {
        guard let session = try? host.open() else { return 1 }
        defer { session.close() }
        guard let accounts = try? AzAccounts.current(session) else { return 1 }
        return accounts.retryListing()
    }

    /// A failure: the lines after `ERROR: ` and az's exit status.
    public struct Failure: Error {
        public var message: String
        public var status: Int32 = 1

        public init(message: String, status: Int32 = 1) {
            self.message = message
            self.status = status
        }
    }

    private static func answer(_ host: any AzHost, _ body: (any AzEngine) throws(Failure) -> String) -> Int32 {
        do throws(Failure) {
            let session = try host.open()
            let text = try body(session)
            if !text.isEmpty { session.print(text) }
            session.close()
            return 0
        } catch {
            return fail(error.message, status: error.status)
        }
    }

    private static func getAccessToken(
        _ request: AzCommandLine.GetAccessToken, _ output: AzOutputOptions, _ session: any AzEngine
    ) throws(Failure) -> String {
        if request.subscription != nil, request.tenant != nil {
            throw Failure(message: "Please specify only one of subscription and tenant, not both")
        }
        // The configured authority names the cloud (the resource types, Resource Manager) and
        // the host a --tenant goes on; reading it costs nothing more: every request here waits
        // for `initialize`'s reply first.
        let configured = try configuredAuthority(session)
        var silent = AcquireTokenSilentRequest(scopes: AzResults.scopes(request, cloud: AzCloud.forAuthority(configured)))
        let subscription = try subscription(for: request, configured: configured, session)
        silent.authority = subscription?.authority
        if let tenant = request.tenant {
            if let problem = session.tenantProblem(tenant, option: "--tenant") { throw Failure(message: problem, status: 2) }
            guard let authority = session.authority(configured, tenant: tenant) else {
                throw Failure(message: "auth-sidecar: the configured authority \(configured) has no host to put a tenant on")
            }
            silent.authority = authority
        }
        if let challenge = request.claimsChallenge {
            guard let claims = ClaimsChallenge.claims(fromChallenge: challenge) else {
                throw Failure(message: "--claims-challenge must be base64 of a JSON object (as in WWW-Authenticate)", status: 2)
            }
            silent.claims = claims
        }
        let result = try call(session, silent)
        let (token, expiresOn) = (result.accessToken, result.expiresOn)
        let accountTenant = result.account["tenantId"]?.stringValue ?? result.tenantId
        if let subscription,
            case .object(var az) = AzResults.accessToken(
                token: token, expiresOn: expiresOn, tokenType: result.tokenType, requestedTenant: nil,
                accountTenant: accountTenant)
        {
            // az's answer for a subscription: its ID, and the tenant it was listed under
            az["subscription"] = subscription.entry["id"] ?? .null
            az["tenant"] = subscription.entry["tenantId"] ?? .null
            return AzOutput.render(.object(az), output)
        }
        if let subscription = request.subscription, !AzResults.names(subscription, tenantId: accountTenant) {
            throw Failure(message: AzResults.subscriptionNotFound(subscription))
        }
        let az = AzResults.accessToken(
            token: token, expiresOn: expiresOn, tokenType: result.tokenType, requestedTenant: request.tenant, accountTenant: accountTenant)
        return AzOutput.render(az, output)
    }

    private static func accountShow(_ subscription: String?, _ output: AzOutputOptions, _ session: any AzEngine) throws(Failure) -> String {
        if let app = try servicePrincipalShow(subscription, output, session) { return app }
        if let shown = try subscriptionShown(subscription, output, session) { return shown }
        let account = try call(session, GetCurrentAccountRequest()).account
        guard let tenantId = account["tenantId"]?.stringValue else {
            throw notLoggedIn
        }
        if let subscription, !AzResults.names(subscription, tenantId: tenantId) {
            throw Failure(message: AzResults.subscriptionNotFound(subscription))
        }
        let environment = account["environment"]?.stringValue ?? ""
        let shown = AzResults.account(
            username: session.username(account), tenantId: tenantId, cloud: AzCloud.forAuthority("https://" + environment))
        return AzOutput.render(shown, output)
    }

    static func configuredAuthority(_ session: any AzEngine) throws(Failure) -> String {
        try session.configuration()["authority"]?.stringValue ?? ""
    }

    /// A typed request's typed result, or its error in az's words.
    static func call<Request: RequestType>(_ session: any AzEngine, _ request: Request) throws(Failure) -> Request.Response {
        let outcome = try session.outcome(Request.method, request.params)
        switch outcome {
        case .success(let result):
            do { return try Request.Response(decoding: result) } catch {
                throw Failure(message: "auth-sidecar: the engine's answer: \(error.message)")
            }
        case .failure(let error) where error.code == AuthErrorMapping.interactionRequiredCode && error.data["suberror"]?.stringValue == "no_account":
            throw notLoggedIn
        case .failure(let error) where error.code == AuthErrorMapping.accountNotFoundCode:
            throw notLoggedIn
        case .failure(let error) where error.code == AuthErrorMapping.interactionRequiredCode:
            throw Failure(
                message: session.oneLine(error.message)
                    + "\nInteractive authentication is needed: this az is auth-sidecar's, so run 'auth-sidecar login' (not 'az login').")
        case .failure(let error):
            throw Failure(message: session.message(for: error))
        }
    }

    /// az's text when no one is signed in, and the cure here.
    static let notLoggedIn = Failure(
        message: AzResults.notLoggedIn + "\nThis az is auth-sidecar's: sign in with 'auth-sidecar login'.")

    /// Writes `ERROR: message` to stderr as az does; returns `status`.
    private static func fail(_ message: String, status: Int32) -> Int32 {
        AzConsole.write("ERROR: \(message)\n", to: STDERR_FILENO)
        return status
    }
}
