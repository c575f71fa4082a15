import AuthSeams
import JSON
import Synchronization
import TokenCache

/// The auth core's entry point: what MSAL's `MSALPublicClientApplication` offers, for one
/// configured client. Safe to call from many tasks at once.
///
/// ```swift
/// let app = PublicClientApplication(configuration: config, dependencies: deps)
/// let result = try await app.acquireTokenSilently(SilentRequest(), correlationId: id)
/// ```
public final class PublicClientApplication: Sendable {
    public let configuration: ClientConfiguration
    private let dependencies: AuthDependencies
    private let resolver: AuthorityResolver
    private let refreshes = RefreshCoordinator()
    private let silentMemo = SilentMemo()
    private let tracker = CurrentAccountTracker()
    private let interactiveRunning = Mutex(false)
    /// The Linux identity broker's client, unless ``ClientConfiguration/brokerMode`` is `off`.
    private let broker: BrokerClient?

    public init(configuration: ClientConfiguration, dependencies: AuthDependencies) {
        self.configuration = configuration
        self.dependencies = dependencies
        resolver = AuthorityResolver(
            transport: dependencies.transport,
            trust: AuthorityTrust(
                knownAuthorities: configuration.knownAuthorities, instanceDiscovery: configuration.instanceDiscovery,
                configured: configuration.authority),
            persisted: PersistedDiscovery(cache: dependencies.cache, clock: dependencies.clock, logger: dependencies.logger))
        let clock = dependencies.clock
        broker =
            configuration.brokerMode == .off
            ? nil
            : BrokerClient(
                mode: configuration.brokerMode, broker: dependencies.broker ?? NoIdentityBroker(), configuration: configuration,
                logger: dependencies.logger, timeout: configuration.brokerTimeout, now: { clock.now() },
                newCorrelationId: dependencies.newCorrelationId)
    }

    /// The one routing table: the ``Backend`` that answers a call now, refusing a token kind it
    /// does not serve (``Backend/refusal(_:)``) before any network or D-Bus call. `kind`: the
    /// token a call asks for; `nil` for a call about accounts, which the app identity leaves to
    /// the broker or the cache. The app identity (`clientAssertion`) answers every token
    /// request; the broker, while in use (`required`, or `auto` until a call found it absent);
    /// else the engine's own flows.
    private func backend(for kind: TokenKind?) throws(AuthError) -> Backend {
        let backend: Backend =
            if kind != nil, configuration.clientAssertion != nil {
                .appIdentity
            } else if let broker, broker.inUse {
                .broker
            } else {
                .identityService
            }
        if let kind, !backend.serves(kind) { throw backend.refusal(kind) }
        return backend
    }

    /// A call answered by its backend (``backend(for:)``): `viaBroker` by the broker, `viaFlows`
    /// by the engine's flows (also when `broker` is `auto` and the call found no broker: said
    /// once, and routed again). `viaApp` by the app identity; `nil`: it answers like the flows.
    private func routed<T>(
        _ kind: TokenKind?, viaApp: (() async throws -> T)? = nil, viaBroker: (BrokerClient) async throws -> T,
        viaFlows: () async throws -> T
    ) async throws -> T {
        switch try backend(for: kind) {
        case .appIdentity:
            if let viaApp { return try await viaApp() }
        case .broker:
            if let broker {
                do {
                    return try await viaBroker(broker)
                } catch let error as AuthError where broker.fallsBack(from: error) {
                    return try await routed(kind, viaApp: viaApp, viaBroker: viaBroker, viaFlows: viaFlows)
                }
            }
        case .identityService: break
        }
        return try await viaFlows()
    }

    /// Whether the Linux identity broker serves this client, and its version (`getDeviceInformation`);
    /// `nil` when `broker` is `off` (the bus is not asked).
    public func brokerInformation() async -> (available: Bool, version: String?)? {
        guard let broker else { return nil }
        guard broker.inUse else { return (false, nil) }
        do throws(AuthError) {
            return (true, try await broker.version())
        } catch {
            // An error answer is an answer: the broker is there.
            return broker.fallsBack(from: error) || error.kind == .brokerUnavailable ? (false, nil) : (true, nil)
        }
    }

    private func directory() -> AccountDirectory {
        AccountDirectory(
            configuration: configuration, cache: dependencies.cache,
            environments: resolver.environments(of: configuration.authority))
    }

    /// Signs in through the browser (`browser` overrides the system launcher, e.g. to let the
    /// JSON-RPC client open the URL). One interactive sign-in at a time.
    public func acquireTokenInteractively(
        _ request: InteractiveRequest, browser: (any BrowserLauncher)? = nil,
        correlationId: String
    ) async throws -> TokenResult {
        try await signingInInteractively(request, correlationId: correlationId) { account in
            let flow = InteractiveFlow(configuration: configuration, dependencies: dependencies, resolver: resolver)
            return try await flow.run(
                request, account: account, browser: browser ?? dependencies.browser, correlationId: correlationId)
        }
    }

    /// Signs in with the paste-back flow: `prompt` shows the URL and returns the address the
    /// browser ended on (remote shells where no browser opens here and no port is forwarded).
    /// One interactive sign-in at a time, as for the browser; the broker, when in use, asks the
    /// user its own way, as for the device code.
    public func acquireTokenByPastedAddress(
        _ request: InteractiveRequest, prompt: any PasteBackPrompt, correlationId: String
    ) async throws -> TokenResult {
        try await signingInInteractively(request, correlationId: correlationId) { account in
            let flow = PasteBackFlow(configuration: configuration, dependencies: dependencies, resolver: resolver)
            return try await flow.run(request, account: account, prompt: prompt, correlationId: correlationId)
        }
    }

    /// The one rule of the interactive sign-ins (browser, paste-back): not for an app identity,
    /// one at a time, routed through the backend table (the broker asks the user its own way),
    /// and with the flows `flow` runs for the request's account, which then becomes current.
    private func signingInInteractively(
        _ request: InteractiveRequest, correlationId: String,
        flow: (Account?) async throws -> TokenResult
    ) async throws -> TokenResult {
        if try backend(for: request.token.kind) == .appIdentity { try refuseUserSignIn("acquireToken") }
        let started = interactiveRunning.withLock { running in
            defer { running = true }
            return !running
        }
        guard started else {
            throw AuthError(.interactiveInProgress, "another interactive sign-in is in progress; finish or cancel it first")
        }
        defer { interactiveRunning.withLock { $0 = false } }
        return try await routed(
            request.token.kind,
            viaBroker: { broker in
                let result = try await broker.interactive(request, correlationId: correlationId)
                tracker.note(result.account)
                return result
            },
            viaFlows: {
                let directory = directory()
                let account = try request.account.map { reference throws in
                    guard let found = try directory.resolve(reference) else { throw Self.accountNotFound(reference) }
                    return found
                }
                let result = try await flow(account)
                try await makeCurrent(result.account)
                return result
            })
    }

    /// Signs in with a device code shown to the user (headless machines).
    public func acquireTokenByDeviceCode(_ request: DeviceCodeRequest, correlationId: String) async throws -> TokenResult {
        if try backend(for: .bearer) == .appIdentity { try refuseUserSignIn("acquireTokenByDeviceCode") }
        // The broker has its own way of asking the user: no device code of ours.
        var interactive = InteractiveRequest()
        interactive.scopes = request.scopes
        interactive.authority = request.authority
        interactive.claims = request.claims
        return try await routed(
            .bearer,
            viaBroker: { broker in
                let result = try await broker.interactive(interactive, correlationId: correlationId)
                tracker.note(result.account)
                return result
            },
            viaFlows: {
                let flow = DeviceCodeFlow(configuration: configuration, dependencies: dependencies, resolver: resolver)
                let result = try await flow.run(request, correlationId: correlationId)
                try await makeCurrent(result.account)
                return result
            })
    }

    private var silentFlow: SilentFlow {
        SilentFlow(
            configuration: configuration, dependencies: dependencies, resolver: resolver,
            coordinator: refreshes, memo: silentMemo)
    }

    /// A token without UI; `interactionRequired` when only the user can help. A valid
    /// cached token costs no network request.
    public func acquireTokenSilently(_ request: SilentRequest, correlationId: String) async throws -> TokenResult {
        try await routed(
            request.token.kind,
            viaApp: { [self] in
                guard let source = configuration.clientAssertion else { return try await silentFlow.run(request, correlationId: correlationId) }
                let flow = AppTokenFlow(
                    configuration: configuration, dependencies: dependencies, resolver: resolver, coordinator: refreshes, source: source)
                return try await flow.run(request, correlationId: correlationId)
            },
            viaBroker: { try await $0.silent(request, correlationId: correlationId) },
            viaFlows: { try await silentFlow.run(request, correlationId: correlationId) })
    }

    /// The error of a user sign-in asked of an app (a client assertion is configured).
    private func refuseUserSignIn(_ what: String) throws {
        guard let source = configuration.clientAssertion else { return }
        throw AuthError(
            .invalidConfiguration,
            "\(what) signs in a user, but this configuration signs in as the app \(configuration.clientId) "
                + "with a client assertion from \(source.name); ask for a token silently (acquireTokenSilent, `auth-sidecar token`)")
    }

    /// What ``acquireTokenSilently(_:correlationId:)`` would answer from the cache, when an
    /// identical request already found the token in this version of the cache and answering
    /// needs no waiting (no load, no lock, no network); `nil`: call that instead. Never throws:
    /// a request in error is for the full call to report.
    ///
    /// - Parameters:
    ///   - checkedAfter: when (monotonic nanoseconds, `POSIX.monotonicNanoseconds()`) the
    ///     request had been received: a cache file checked for changes since then is not
    ///     checked again, so one `stat` serves every request of one input chunk, and none is
    ///     answered from a check made before it arrived. `nil`: always checked.
    ///   - mayRead: the caller may wait for a short read of the cache (nothing else of its is
    ///     waiting: a process's first request). When no identical request found the token yet
    ///     and the read is quick (``TokenCache/readsQuickly``: a small file, sealed already if
    ///     the cache is encrypted), the
    ///     token is looked up now, as the full call would look it up: no task, no thread.
    public func cachedSilentAnswer(_ request: SilentRequest, checkedAfter: UInt64? = nil, mayRead: Bool = false) -> CachedSilentAnswer? {
        // Another backend's answer, or a refusal, is the full call's.
        guard let backend = try? backend(for: request.token.kind), backend != .appIdentity else { return nil }
        if let broker {
            // A kept token, or (the reader idle) the broker's answer to blocking calls.
            guard backend == .broker, let (result, stamp) = broker.silentNow(request, mayCall: mayRead) else { return nil }
            return CachedSilentAnswer(identity: .init(stamp: stamp, key: result.fromCache ? "broker kept" : "broker")) { correlationId in
                var answer = result
                answer.correlationId = correlationId
                return answer
            }
        }
        guard !request.forceRefresh, request.claims == nil,
            let authority = try? configuration.authority(for: request.authority)
        else { return nil }
        let scopes = Scopes.requested(request.scopes, defaults: configuration.defaultScopes)
        let key = SilentMemo.key(request.account, authority: authority, scopes: scopes, binding: request.binding)
        if let stamp = try? dependencies.cache.stampIfReady(checkedAfter: checkedAfter),
            let answer = silentMemo.answer(key, stamp: stamp, now: dependencies.clock.now())
        {
            return answer
        }
        guard mayRead, dependencies.cache.readsQuickly else { return nil }
        // Fills the memo for this version of the cache, which the stamp then names.
        guard (try? silentFlow.find(request.account, authority: authority, scopes: scopes, binding: request.binding, useCache: true)) != nil,
            let stamp = try? dependencies.cache.stampIfReady(checkedAfter: checkedAfter)
        else { return nil }
        return silentMemo.answer(key, stamp: stamp, now: dependencies.clock.now())
    }

    /// What the cache holds for this client, without a secret, and the last failed refresh
    /// (`status`): read by the engine, with the key it already holds.
    public func cacheInventory() throws -> (inventory: CacheInventory, lastRefreshError: JSONObject?) {
        let clientId = configuration.clientId
        let inventory = try dependencies.cache.read { $0.inventory(clientId: clientId) }
        let record = dependencies.cache.refreshErrors.read()
        let ours = record?["clientId"]?.stringValue.map { $0.lowercased() == clientId.lowercased() } ?? true
        return (inventory, ours ? record : nil)
    }

    /// The client assertion's source and the expiry of the assertion it gives now (`status`;
    /// never the assertion); `nil` for a public client. `reason`: why it gave none.
    public func clientAssertionStatus() async -> (source: String, expiresOn: Int64?, reason: String?)? {
        guard let source = configuration.clientAssertion else { return nil }
        do {
            let assertion = try await source.assertion(transport: dependencies.transport)
            return (source.name, assertion.expiresOn, nil)
        } catch let error as AuthError {
            return (source.name, nil, error.message)
        } catch {
            return (source.name, nil, "\(error)")
        }
    }

    /// The accounts in the cache (optionally those with `username`).
    public func accounts(username: String? = nil) async throws -> [Account] {
        try await routed(
            nil, viaBroker: { try await $0.accounts(username: username).map(\.account) },
            viaFlows: { try directory().all(username: username) })
    }

    /// The accounts in the cache (optionally those with `username`), each with its tenants and
    /// whether it is the current account.
    public func accountListing(username: String? = nil) async throws -> [ListedAccount] {
        try await routed(
            nil, viaBroker: { try await $0.listing(username: username) }, viaFlows: { try directory().listing(username: username) })
    }

    /// Makes the account `reference` names the current account (what ``currentAccount()``
    /// returns), for every process sharing the cache; returns it and the account current before.
    /// Unlike a sign-in, not noted as this process's own change: the next ``currentAccount()``
    /// reports the switch, since several clients may share this engine (the agent).
    public func setCurrentAccount(_ reference: AccountReference) async throws -> (account: Account, previous: Account?) {
        try await routed(
            nil,
            viaBroker: { broker in
                let (account, previous) = try await broker.setCurrent(reference)
                return (account: account, previous: previous)
            },
            viaFlows: {
                let directory = directory()
                guard let account = try directory.resolve(reference) else { throw Self.accountNotFound(reference) }
                let previous = try directory.current()
                try directory.setCurrent(account)
                return (account: account, previous: previous)
            })
    }

    /// The current account, and the one known before if it changed since
    /// (another process signed in or out). A sign-out is reported once as the previous
    /// account, also to a process that never knew the account (a shell pipeline).
    public func currentAccount() async throws -> (current: Account?, previous: Account?) {
        try await routed(
            nil,
            viaBroker: { broker in
                let current = try await broker.currentAccount()?.account
                return (current, tracker.update(current))
            },
            viaFlows: {
                let directory = directory()
                let current = try directory.current()
                let signedOut = current == nil ? try directory.takeSignedOut() : nil
                return (current, tracker.update(current) ?? signedOut)
            })
    }

    /// Removes the account's tokens; with `fromBrowser` (always on a shared device) also
    /// ends the browser session. Returns the account signed out and what became of the
    /// browser part (`nil`: none was asked for).
    @discardableResult
    public func signOut(_ reference: AccountReference?, fromBrowser: Bool, browser: (any BrowserLauncher)? = nil) async throws
        -> (account: Account, browserSignOut: BrowserSignOut?)
    {
        try await routed(
            nil, viaBroker: { (try await $0.signOut(reference), nil) },
            viaFlows: {
                let directory = directory()
                guard let account = try directory.resolve(reference) else {
                    if let reference { throw Self.accountNotFound(reference) }
                    throw AuthError(.accountNotFound, "no account is signed in")
                }
                let flow = SignOutFlow(configuration: configuration, dependencies: dependencies, resolver: resolver)
                let browserSignOut = try await flow.run(
                    account, directory: directory, fromBrowser: fromBrowser,
                    browser: browser ?? dependencies.browser)
                return (account, browserSignOut)
            })
    }

    private func makeCurrent(_ account: Account) async throws {
        try directory().setCurrent(account)
        tracker.note(account)
    }

    /// The binding of this cache's proof-of-possession key (made, and kept beside an encrypted
    /// cache, on first use): what a PoP request's ``RequestedToken`` carries. A backend that
    /// does not serve PoP tokens refuses here, before a key is made.
    public func popBinding() throws(AuthError) -> PopBinding {
        let backend = try backend(for: .proofOfPossession)
        // The broker signs with its own key; `auto` may still fall back to the flows, which need ours.
        if backend == .broker, broker?.mode == .required { return .heldByBroker }
        return PopBinding(key: try popKey())
    }

    /// A fresh signed HTTP request for `target` carrying the PoP access token `accessToken`
    /// (signed with this cache's PoP key, `ts` now). No request to the identity service.
    public func signedHttpRequest(accessToken: String, target: PopRequestTarget) throws(AuthError) -> String {
        let key = try popKey()
        do {
            return try SignedHttpRequest.make(accessToken: accessToken, target: target, key: key, now: dependencies.clock.now())
        } catch {
            throw AuthError(.cacheUnavailable, "signing the HTTP request failed: \(error)")
        }
    }

    private func popKey() throws(AuthError) -> PopSigningKey {
        do {
            return try dependencies.popKeys.key()
        } catch let error as TokenCacheError {
            throw AuthError(.cacheUnavailable, "the proof-of-possession key cannot be used: \(error.description)")
        } catch {
            throw AuthError(.cacheUnavailable, "the proof-of-possession key cannot be used: \(error)")
        }
    }

    static func accountNotFound(_ reference: AccountReference) -> AuthError {
        switch reference {
        case .homeAccountId(let id): AuthError(.accountNotFound, "no cached account has homeAccountId \(id)")
        case .username(let name): AuthError(.accountNotFound, "no cached account has username \(name)")
        }
    }
}
