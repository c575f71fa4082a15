import AuthSeams
import JSON
import Logging
import POSIXSupport
import Synchronization

/// The auth core's calls through the Linux identity broker (``IdentityBroker``): what
/// ``PublicClientApplication`` does instead of its own flows when ``BrokerMode`` says so. The
/// broker keeps the tokens and the accounts; nothing it issues is written to the file cache,
/// and no request goes from here to the identity service.
final class BrokerClient: Sendable {
    let mode: BrokerMode
    private let broker: any IdentityBroker
    private let configuration: ClientConfiguration
    private let logger: Logger
    /// A fresh correlation id for a call a request makes besides its own (an account lookup).
    private let newCorrelationId: @Sendable () -> String
    /// When (monotonic milliseconds) a call in `auto` last found no broker: the usual flows
    /// answer for ``retryAfterMilliseconds``, then the broker is asked again (it may be back:
    /// restarted, or the bus restarted); a broker still absent answers at once.
    private let absentSince = Mutex<Int64?>(nil)
    /// Whether the fallback was said on stderr (once).
    private let said = Mutex(false)
    static let retryAfterMilliseconds: Int64 = 5000
    /// The account signed in or chosen last in this engine (its `homeAccountId`).
    private let current = Mutex<String?>(nil)
    /// The broker's access tokens kept in memory until 5 minutes before they expire, by
    /// request (account named, authority, scopes): never written anywhere. Emptied by a sign-in,
    /// a sign-out or a change of account in this engine, and when it holds ``keptTokensLimit``.
    private let kept = Mutex<[String: Kept]>([:])
    /// A kept token and its stamp (the same for every answer of that token: the reply's template).
    private struct Kept {
        let result: TokenResult
        let stamp: UInt64
    }

    private let stamps = Mutex<UInt64>(0)
    static let keptTokensLimit = 256
    private let now: @Sendable () -> Int64

    /// The time limit of every call but an interactive sign-in.
    let timeout: Duration

    init(
        mode: BrokerMode, broker: any IdentityBroker, configuration: ClientConfiguration, logger: Logger,
        timeout: Duration, now: @escaping @Sendable () -> Int64, newCorrelationId: @escaping @Sendable () -> String
    ) {
        self.now = now
        self.mode = mode
        self.broker = broker
        self.configuration = configuration
        self.logger = logger
        self.timeout = timeout
        self.newCorrelationId = newCorrelationId
        // What a first silent request asks first, asked now, while the request is being read.
        broker.prepare(BrokerCall(method: .getAccounts, correlationId: newCorrelationId(), request: accountsRequest))
    }

    /// Whether requests go through the broker: `required` always (a call without a broker
    /// fails, naming it); `auto` unless a call found no broker less than
    /// ``retryAfterMilliseconds`` ago (no availability check of its own: the first call
    /// tells, and costs no extra round trip when the broker is there).
    var inUse: Bool {
        guard mode == .auto else { return mode == .required }
        guard let since = absentSince.withLock({ $0 }) else { return true }
        return POSIX.monotonicMilliseconds() - since >= Self.retryAfterMilliseconds
    }

    /// Whether the usual flows answer instead after `error`: in `auto`, when it says there is no
    /// broker (said once on stderr; asked again after ``retryAfterMilliseconds``).
    func fallsBack(from error: AuthError) -> Bool {
        guard mode == .auto, error.kind == .brokerUnavailable else { return false }
        absentSince.withLock { $0 = POSIX.monotonicMilliseconds() }
        let first = said.withLock { said in
            defer { said = true }
            return !said
        }
        if first { logger.warning("broker \"auto\": signing in without the broker: \(error.message)") }
        return true
    }

    // MARK: - Tokens

    func interactive(_ request: InteractiveRequest, correlationId: String) async throws(AuthError) -> TokenResult {
        try Self.checkPop(request.token.kind, target: request.popTarget)
        let authority = try configuration.authority(for: request.authority)
        let scopes = Scopes.requested(request.scopes, defaults: configuration.defaultScopes) + request.extraScopesToConsent
        let prompt = request.prompt.oauthValue
        var body: JSONObject = [:]
        var parameters: JSONObject
        if let reference = request.account {
            let account = try await find(reference)
            parameters = authParameters(
                authority: authority, scopes: scopes, type: 6, claims: request.claims, account: account,
                username: account.account.username, prompt: prompt)
            body["account"] = BrokerAnswers.completeAccount(account.json)
        } else {
            parameters = authParameters(
                authority: authority, scopes: scopes, type: 6, claims: request.claims, account: nil, username: request.loginHint,
                prompt: prompt)
        }
        if let target = request.popTarget { parameters["popParams"] = Self.popParams(target) }
        // As MSALRuntime's sign-in: a sign-in, with the parent window (the console's handle, 1).
        parameters["isSignIn"] = true
        parameters["parentWindow"] = ["handle": .int(BrokerInterface.consoleWindowHandle)]
        body["parentWindowHandle"] = .int(BrokerInterface.consoleWindowHandle)
        body["authParameters"] = .object(parameters)
        let answer = try await cancellable(.acquireTokenInteractively, correlationId: correlationId, body: body)
        let (result, _) = try BrokerAnswers.token(
            answer, requested: scopes, account: nil, authority: authority, correlationId: correlationId, pop: request.popTarget != nil)
        current.withLock { $0 = result.account.homeAccountId }
        kept.withLock { $0 = [:] }
        return result
    }

    func silent(_ request: SilentRequest, correlationId: String) async throws(AuthError) -> TokenResult {
        try Self.checkPop(request.token.kind, target: request.popTarget)
        let authority = try configuration.authority(for: request.authority)
        let scopes = Scopes.requested(request.scopes, defaults: configuration.defaultScopes)
        let key = Self.keptKey(request, authority: authority, scopes: scopes)
        // A PoP answer is the broker's signature of one request: never kept (the broker keeps the token).
        if request.popTarget == nil, !request.forceRefresh, request.claims == nil, var answer = keptToken(key)?.result {
            answer.correlationId = correlationId
            answer.fromCache = true
            return answer
        }
        let account: BrokerAccount
        if let reference = request.account {
            account = try await find(reference)
        } else {
            guard let chosen = try await currentAccount() else {
                var failure = AuthError(.interactionRequired, "no account is signed in with the identity broker; call acquireToken")
                failure.suberror = "no_account"
                throw failure
            }
            account = chosen
        }
        var parameters = silentParameters(account, authority: authority, scopes: scopes, claims: request.claims)
        if let target = request.popTarget { parameters["popParams"] = Self.popParams(target) }
        var (result, _) = try await silentOrRescued(
            parameters, account: account, scopes: scopes, authority: authority, correlationId: correlationId)
        if request.forceRefresh {
            // The broker renews the token it is shown (it would hand the cached one back otherwise).
            parameters["accessTokenToRenew"] = .string(result.accessToken)
            (result, _) = try await silentCall(parameters, account: account, scopes: scopes, authority: authority, correlationId: newCorrelationId())
        }
        if request.popTarget == nil { keep(result, as: key) }
        return result
    }

    /// What `acquireTokenSilent` answers without a task (``PublicClientApplication/cachedSilentAnswer(_:checkedAfter:mayRead:)``):
    /// a kept token; else, when `mayCall` (the reader has nothing else to do: a process's first
    /// request), the broker's answer to blocking calls on this thread: the accounts (prepared at
    /// start) and the token. `nil`: the full call answers (also every error, which it reports).
    func silentNow(_ request: SilentRequest, mayCall: Bool) -> (result: TokenResult, stamp: UInt64)? {
        guard inUse, request.popTarget == nil, !request.forceRefresh, request.claims == nil,
            let authority = try? configuration.authority(for: request.authority)
        else { return nil }
        let scopes = Scopes.requested(request.scopes, defaults: configuration.defaultScopes)
        let key = Self.keptKey(request, authority: authority, scopes: scopes)
        if let found = keptToken(key) {
            var result = found.result
            result.fromCache = true
            return (result, found.stamp)
        }
        let listing = BrokerCall(method: .getAccounts, correlationId: newCorrelationId(), request: accountsRequest)
        guard mayCall, case .success(let listed)? = broker.callNow(listing, timeout: timeout),
            let answer = try? BrokerAnswers.object(listed, of: .getAccounts)
        else { return nil }
        let all = accounts(in: answer)
        let account =
            if let reference = request.account { try? Self.match(reference, in: all) } else {
                Self.current(among: all, chosen: current.withLock { $0 })
            }
        guard let account else { return nil }
        let parameters = silentParameters(account, authority: authority, scopes: scopes, claims: nil)
        let correlationId = newCorrelationId()
        let body: JSONObject = ["account": BrokerAnswers.completeAccount(account.json), "authParameters": .object(parameters)]
        guard
            case .success(let text)? = broker.callNow(
                BrokerCall(method: .acquireTokenSilently, correlationId: correlationId, request: JSONValue.object(body).jsonText),
                timeout: timeout),
            let object = try? BrokerAnswers.object(text, of: .acquireTokenSilently),
            let (result, _) = try? BrokerAnswers.token(
                object, requested: scopes, account: account.json, authority: authority, correlationId: correlationId)
        else { return nil }
        return (result, keep(result, as: key))
    }

    private static func keptKey(_ request: SilentRequest, authority: Authority, scopes: [String]) -> String {
        "\(String(describing: request.account))|\(authority.url)|\(scopes.map { $0.lowercased() }.sorted().joined(separator: " "))"
    }

    private func keptToken(_ key: String) -> Kept? {
        guard let found = kept.withLock({ $0[key] }), found.result.expiresOn - 300 > now() else { return nil }
        return found
    }

    @discardableResult
    private func keep(_ result: TokenResult, as key: String) -> UInt64 {
        let stamp = stamps.withLock { stamp in
            stamp += 1
            return stamp
        }
        kept.withLock { tokens in
            if tokens.count >= Self.keptTokensLimit { tokens = [:] }
            tokens[key] = Kept(result: result, stamp: stamp)
        }
        return stamp
    }

    private func silentCall(
        _ parameters: JSONObject, account: BrokerAccount, scopes: [String], authority: Authority, correlationId: String
    ) async throws(AuthError) -> (TokenResult, accountJSON: JSONValue?) {
        let answer = try await call(
            .acquireTokenSilently, correlationId: correlationId,
            body: ["account": BrokerAnswers.completeAccount(account.json), "authParameters": .object(parameters)])
        return try BrokerAnswers.token(
            answer, requested: scopes, account: account.json, authority: authority, correlationId: correlationId,
            pop: Self.asksPop(parameters))
    }

    /// `popParams` as MSALRuntime's `set_pop_params(http_method, uri_host, uri_path, nonce)` fills
    /// them (recorded through the stand-in, Tests/e2e_auth/test_broker_msalruntime.py): every member
    /// a string, empty when absent; `client_claims` in `clientClaims` (sso-mib's name).
    static func popParams(_ target: PopRequestTarget) -> JSONValue {
        [
            "clientClaims": .string(target.clientClaims ?? ""), "homeAccountId": "", "httpMethod": .string(target.method),
            "nonce": .string(target.nonce ?? ""), "uriHost": .string(target.hostAndPort), "uriPath": .string(target.pathAndQuery.path),
        ]
    }

    /// A PoP request carries the resource request the broker signs; a target without the kind is a mistake.
    private static func checkPop(_ kind: TokenKind, target: PopRequestTarget?) throws(AuthError) {
        guard (kind == .proofOfPossession) != (target != nil) else { return }
        throw AuthError(.internal, "a proof-of-possession request for the identity broker needs its resource request (popTarget), and only it")
    }

    /// Whether `parameters` ask for a proof-of-possession token.
    private static func asksPop(_ parameters: JSONObject) -> Bool { parameters["popParams"]?.objectValue != nil }

    /// The silent call; with ``ClientConfiguration/brokerSilentRescue`` and a display, a silent
    /// call answered InteractionRequired (status 2) is made once more as `acquireTokenInteractively`
    /// with the same parameters (a broker can often mint the token from its primary refresh token
    /// with no window), bounded by ``ClientConfiguration/interactiveTimeout``. Logged either way;
    /// a failed rescue reports the silent call's error.
    private func silentOrRescued(
        _ parameters: JSONObject, account: BrokerAccount, scopes: [String], authority: Authority, correlationId: String
    ) async throws(AuthError) -> (TokenResult, accountJSON: JSONValue?) {
        do throws(AuthError) {
            return try await silentCall(parameters, account: account, scopes: scopes, authority: authority, correlationId: correlationId)
        } catch {
            // Status 2 only (BrokerAnswers names it): AccountUnusable and the rest need the user.
            guard configuration.brokerSilentRescue, error.kind == .interactionRequired, error.message.contains("with InteractionRequired:")
            else { throw error }
            guard let display = configuration.display else {
                logger.notice("broker silent rescue: not tried, no display (DISPLAY, WAYLAND_DISPLAY) is set")
                throw error
            }
            var interactive = parameters
            interactive["authorizationType"] = .int(6)
            logger.warning("broker silent rescue: the broker answered InteractionRequired; trying acquireTokenInteractively once (\(display))")
            do throws(AuthError) {
                let answer = try await call(
                    .acquireTokenInteractively, correlationId: newCorrelationId(),
                    body: ["account": BrokerAnswers.completeAccount(account.json), "authParameters": .object(interactive)],
                    timeout: .some(configuration.interactiveTimeout))
                let rescued = try BrokerAnswers.token(
                    answer, requested: scopes, account: account.json, authority: authority, correlationId: correlationId,
                    pop: Self.asksPop(parameters))
                logger.notice("broker silent rescue: acquireTokenInteractively answered a token")
                return rescued
            } catch let rescue {
                logger.warning("broker silent rescue: failed: \(rescue.message)")
                throw error
            }
        }
    }

    // MARK: - Accounts

    /// The broker's accounts for this client (optionally those with `username`).
    func accounts(username: String? = nil) async throws(AuthError) -> [BrokerAccount] {
        let answer = try await call(.getAccounts, correlationId: newCorrelationId(), request: accountsRequest)
        let all = accounts(in: answer)
        guard let username else { return all }
        return all.filter { $0.account.username.lowercased() == username.lowercased() }
    }

    /// The accounts of a `getAccounts` answer.
    private func accounts(in answer: JSONObject) -> [BrokerAccount] {
        let environment = configuration.authority.host
        return (answer["accounts"]?.arrayValue ?? []).compactMap { json in
            BrokerAnswers.account(json, environment: environment).map { BrokerAccount(account: $0, json: json) }
        }
    }

    /// The listing `getAccounts` answers: each account with its tenant, the current one marked.
    func listing(username: String? = nil) async throws(AuthError) -> [ListedAccount] {
        let all = try await accounts()
        let chosen = Self.current(among: all, chosen: current.withLock { $0 })?.account.homeAccountId
        return all.filter { username == nil || $0.account.username.lowercased() == username?.lowercased() }.map {
            ListedAccount(account: $0.account, tenants: [$0.account.tenantId], isCurrent: $0.account.homeAccountId == chosen)
        }
    }

    /// The account chosen last in this engine while the broker still has it, else its first.
    func currentAccount() async throws(AuthError) -> BrokerAccount? {
        Self.current(among: try await accounts(), chosen: current.withLock { $0 })
    }

    private static func current(among accounts: [BrokerAccount], chosen: String?) -> BrokerAccount? {
        accounts.first { $0.account.homeAccountId == chosen } ?? accounts.first
    }

    /// Makes the account `reference` names the current one (in this engine); returns it and the one before.
    func setCurrent(_ reference: AccountReference) async throws(AuthError) -> (Account, previous: Account?) {
        let previous = try await currentAccount()?.account
        let account = try await find(reference)
        current.withLock { $0 = account.account.homeAccountId }
        kept.withLock { $0 = [:] }
        return (account.account, previous)
    }

    /// Removes the account from the broker (`removeAccount`); returns it.
    func signOut(_ reference: AccountReference?) async throws(AuthError) -> Account {
        let account: BrokerAccount
        if let reference {
            account = try await find(reference)
        } else {
            guard let chosen = try await currentAccount() else { throw AuthError(.accountNotFound, "no account is signed in") }
            account = chosen
        }
        _ = try await call(
            .removeAccount, correlationId: newCorrelationId(),
            body: [
                "account": BrokerAnswers.completeAccount(account.json), "clientId": .string(configuration.clientId),
                "redirectUri": .string(BrokerInterface.redirectURI),
            ])
        current.withLock { if $0 == account.account.homeAccountId { $0 = nil } }
        kept.withLock { $0 = [:] }
        return account.account
    }

    /// The broker's version (`getLinuxBrokerVersion`).
    func version() async throws(AuthError) -> String? {
        let answer = try await call(.getLinuxBrokerVersion, correlationId: newCorrelationId(), body: ["msalCppVersion": "1.28.0"])
        return answer["linuxBrokerVersion"]?.stringValue
    }

    private func find(_ reference: AccountReference) async throws(AuthError) -> BrokerAccount {
        try Self.match(reference, in: try await accounts())
    }

    /// The one account of `all` that `reference` names.
    private static func match(_ reference: AccountReference, in all: [BrokerAccount]) throws(AuthError) -> BrokerAccount {
        let matches: [BrokerAccount]
        switch reference {
        case .homeAccountId(let id): matches = all.filter { $0.account.homeAccountId.lowercased() == id.lowercased() }
        case .username(let name): matches = all.filter { $0.account.username.lowercased() == name.lowercased() }
        }
        guard matches.count < 2 else {
            throw AuthError(.ambiguousAccount, "several of the broker's accounts have that username; name one by homeAccountId")
        }
        guard let found = matches.first else { throw PublicClientApplication.accountNotFound(reference) }
        return found
    }

    // MARK: - Calls

    /// `acquireTokenSilently`'s `authParameters` for `account`.
    private func silentParameters(_ account: BrokerAccount, authority: Authority, scopes: [String], claims: String?) -> JSONObject {
        authParameters(
            authority: authority, scopes: scopes, type: 1, claims: claims, account: account, username: account.account.username, prompt: nil)
    }

    /// `authParameters` with every key MSALRuntime's carry (recorded through the stand-in,
    /// Tests/e2e_auth/test_broker_msalruntime.py), empty where this request has nothing:
    /// MSALRuntime's values for the ones the sidecar has no use for (`enrollmentId`,
    /// `password`, `uxContextHandle`); `popParams` null but for a PoP request (``popParams(_:)``). `prompt` both at the top (older brokers)
    /// and in `additionalQueryParametersForAuthorization` (what the broker puts on the URL).
    private func authParameters(
        authority: Authority, scopes: [String], type: Int64, claims: String?, account: BrokerAccount?, username: String?, prompt: String?
    ) -> JSONObject {
        var query: JSONObject = [:]
        if let prompt { query["prompt"] = .string(prompt) }
        var parameters: JSONObject = [
            "accessTokenToRenew": "", "account": account.map { BrokerAnswers.completeAccount($0.json) } ?? .null,
            "additionalQueryParametersForAuthorization": .object(query), "authority": .string(authority.url),
            "authorizationType": .int(type), "clientId": .string(configuration.clientId), "decodedClaims": .string(claims ?? ""),
            "enrollmentId": "", "isTestMode": false, "password": "", "popParams": .null,
            "redirectUri": .string(BrokerInterface.redirectURI), "requestedScopes": JSONValue(scopes),
            "username": .string(username ?? ""), "uxContextHandle": -1,
        ]
        if let prompt { parameters["prompt"] = .string(prompt) }
        return parameters
    }

    /// `getAccounts`' request: this client's.
    private var accountsRequest: String {
        JSONValue.object(["clientId": .string(configuration.clientId), "redirectUri": .string(BrokerInterface.redirectURI)]).jsonText
    }

    private func call(_ method: BrokerMethod, correlationId: String, body: JSONObject, timeout: Duration?? = nil) async throws(AuthError)
        -> JSONObject
    {
        try await call(method, correlationId: correlationId, request: JSONValue.object(body).jsonText, timeout: timeout)
    }

    private func call(_ method: BrokerMethod, correlationId: String, request: String, timeout: Duration?? = nil) async throws(AuthError)
        -> JSONObject
    {
        let text: String
        do throws(BrokerCallError) {
            text = try await broker.call(method, correlationId: correlationId, request: request, timeout: timeout ?? self.timeout)
        } catch {
            throw BrokerAnswers.callError(error, of: method)
        }
        return try BrokerAnswers.object(text, of: method)
    }

    /// An interactive call: no time limit. A cancelled request ends it by dropping the call's
    /// own connection (the broker sees its caller leave), never with an empty-body
    /// `cancelInteractiveFlow`, which took broker 3.0.2 off the bus.
    /// No time limit while a display is set (the broker's window waits for the person);
    /// without one (a headless machine, where nobody may ever see it) `interactiveTimeoutSeconds`.
    private func cancellable(_ method: BrokerMethod, correlationId: String, body: JSONObject) async throws(AuthError) -> JSONObject {
        let limit: Duration? = configuration.display == nil ? configuration.interactiveTimeout : nil
        return try await call(method, correlationId: correlationId, body: body, timeout: .some(limit))
    }
}

/// An account as the broker gave it: the auth core's value and the broker's own JSON (what a
/// later call must name it by).
struct BrokerAccount: Sendable {
    let account: Account
    let json: JSONValue
}

/// The broker when none was wired in (test dependencies): never there.
struct NoIdentityBroker: IdentityBroker {
    func call(_ method: BrokerMethod, correlationId: String, request: String, timeout: Duration?) async throws(BrokerCallError) -> String {
        throw .unavailable("this engine has no D-Bus client")
    }
}
