import AuthCore
import JSON
import JSONRPC
import Logging
import Synchronization

/// The sidecar's method table: routes each request to its handler, answering -32002 before
/// configuration and -32601 for methods that do not exist (or are not built yet).
public final class SidecarService: RPCService, Sendable {
    public struct Options: Sendable {
        /// Configuration from the command line and `--config` (may lack a client ID).
        public var startup = ConfigurationOverrides()
        /// The profile ``startup`` is (`nil`: a flat file, or none).
        public var startupProfile: String?
        /// The profiles `initialize`'s `profile` may choose.
        public var profiles = ProfileTable()
        /// Offer `diagnostics/sleep` and `diagnostics/echo` (for engine tests).
        public var diagnostics = false
        /// Where applications are built: shared by every connection of an agent, so
        /// connections with the same configuration share one engine (cache, refreshes).
        public var applications = ApplicationRegistry()
        /// Makes an engine's dependencies (HTTP, cache, browser, redirect listener, broker) from
        /// its configuration: the live ones (`Composition`'s `ApplicationFactory.live`, the
        /// product's), or a test's (the fuzz target (`Sources/FuzzDispatch`) keeps inputs off
        /// the network and the file system). No default: a door names its wiring.
        public var dependencies: DependencyFactory
        /// The server's message limit (`--max-message-size`): also the largest Graph answer
        /// `callGraph` relays (its reply is one message).
        public var maxMessageSize = 4 << 20
        /// The agent serving this session, as `initialize` reports it (`agent`: since when, how
        /// many connections; forwarded or not, the forwarded sessions); `nil` in the stdio mode.
        public var agentInfo: (@Sendable () -> JSONValue)?
        /// The door's rules, a stage of every request and reply (``RequestPipeline``): the
        /// forward socket's ``ForwardPolicy``, an SSH peer's ``LocalSettingsPolicy``, the user's
        /// own processes' ``OpenSessionPolicy``. No default: a door names its policy or does
        /// not build.
        public var policy: any SessionPolicy
        /// `initialize` answers `cacheProtection` (what protects the file cache: it reads the
        /// file's header for `encrypted` and scans its directory for `setAside`). Off for an
        /// in-process verb that never prints it (`token`, `ssh-cert`, ...: no work it does not
        /// print); every socket and the stdio mode answer it.
        public var reportsCacheProtection = true
        /// What `callGraph`'s token may be for (the forward socket's ``ForwardGraphTokens``); `nil`: no limit.
        public var graphTokens: ForwardGraphTokens?
        /// The options of a door whose rules are `policy` and whose engines are built over
        /// what `dependencies` makes.
        public init(policy: any SessionPolicy, dependencies: @escaping DependencyFactory) {
            self.policy = policy
            self.dependencies = dependencies
        }
    }

    /// Makes the auth core's dependencies for one configured application (the door's
    /// composition root); -32602 or -51005 when the configuration cannot be wired.
    public typealias DependencyFactory = @Sendable (Configuration, Logger) throws(RPCError) -> EngineDependencies

    private let options: Options
    private let logger: Logger
    private let session: SessionState
    /// The reply stage's last fast-path answer (``RequestPipeline``), this session's.
    private let releasedReplies = ReleasedReplyMemo()

    /// - Throws: -32602 (as ``RPCError``) when the start-up configuration names a client
    ///   but is invalid.
    public init(options: Options, logger: Logger) throws(RPCError) {
        self.options = options
        self.logger = logger
        let configured = options.startup.clientId == nil ? nil : try Self.configure(try options.startup.resolved(), options: options, logger: logger)
        session = SessionState(configured: configured)
    }

    /// The route of `name`: the engine's, with the session policy's stages around it
    /// (``RequestPipeline``); -32601 for a method that does not exist.
    public func route(forRequest name: String) -> RPCRoute {
        guard let method = SidecarMethod(rawValue: name), !method.isDiagnostic || options.diagnostics else {
            return .failure(.methodNotFound(name))
        }
        let route = RequestPipeline(policy: options.policy, memo: releasedReplies).route(method, engine: engineRoute(method))
        return options.policy.releasesErrors ? options.policy.releasingErrors(method, route) : route
    }

    /// The engine's own route for `method`, before any policy.
    private func engineRoute(_ method: SidecarMethod) -> RPCRoute {
        if method.needsConfiguration, !session.isConfigured { return .failure(.notConfigured) }
        switch method {
        case .initialize:
            return .immediate { [self] params in try initialize(params) }
        case .ping:
            return .immediate { params in
                _ = try PingRequest(decoding: params)
                return EmptyResponse().result
            }
        case .getDeviceInformation:
            // With a broker configured, what it says needs a call on the bus: a task.
            if let methods = session.methods, methods.app.configuration.brokerMode != .off {
                return .concurrent { [session] params, _ in
                    _ = try GetDeviceInformationRequest(decoding: params)
                    var information = Self.deviceInformation(session.configuration)
                    information.broker = await methods.app.brokerInformation().map { DeviceInformation.Broker(available: $0, version: $1) }
                    return information.json
                }
            }
            return .immediate { [session] params in
                _ = try GetDeviceInformationRequest(decoding: params)
                return Self.deviceInformation(session.configuration).json
            }
        case .diagnosticsSleep:
            return .concurrent { params, _ in
                let request = try DiagnosticsSleepRequest(decoding: params)
                try await Task.sleep(for: .milliseconds(request.milliseconds))
                return DiagnosticsSleepResponse(sleptMs: Int64(request.milliseconds)).result
            }
        case .acquireToken: return auth { $0.acquireToken }
        case .acquireTokenSilent:
            return session.silentRoute ?? .failure(.notConfigured)
        case .getCurrentAccount: return auth(GetCurrentAccountRequest.self) { $0.getCurrentAccount }
        case .getAccounts: return auth(GetAccountsRequest.self) { $0.getAccounts }
        case .setCurrentAccount: return auth(SetCurrentAccountRequest.self) { $0.setCurrentAccount }
        case .signout: return auth(SignoutRequest.self) { $0.signout }
        case .callGraph: return auth(CallGraphRequest.self) { $0.callGraph }
        case .signHttpRequest: return auth(SignHttpRequestRequest.self) { $0.signHttpRequest }
        case .getCacheSummary: return auth(GetCacheSummaryRequest.self) { $0.getCacheSummary }
        case .diagnosticsEcho:
            return .immediate { params in
                switch params {
                case nil: return [:]
                case .object(let members)?: return .object(members)
                default: throw RPCError.invalidParams("params must be an object of named members")
                }
            }
        }
    }

    public func receiveNotification(_ method: String, params: JSONValue?) {
        logger.debug("ignored notification", metadata: ["method": "\(method)"])
    }

    public func serverWillStop() {
        logger.debug("stopping")
    }

    private static func configure(_ configuration: Configuration, options: Options, logger: Logger) throws(RPCError) -> SessionState.Configured {
        var methods = try options.applications.methods(
            for: configuration, logger: logger, dependencies: options.dependencies, maxGraphResponseBytes: options.maxMessageSize)
        methods.graphTokens = options.graphTokens?.check
        return .init(configuration: configuration, methods: methods)
    }

    /// Runs an auth method with the configured application.
    private static func deviceInformation(_ config: Configuration?) -> DeviceInformation {
        DeviceInformation.current(sharedDeviceModeConfigured: config?.sharedDeviceMode ?? false, browserMode: config?.browser ?? .system)
    }

    private func auth(_ handler: @escaping @Sendable (AuthMethods) -> @Sendable (JSONValue?, RequestContext) async throws -> JSONValue) -> RPCRoute {
        guard let methods = session.methods else { return .failure(.notConfigured) }
        return .concurrent(handler(methods))
    }

    /// Runs a typed auth method: its params decoded once, here at the edge (``RequestType``),
    /// its result encoded once.
    private func auth<Request: RequestType>(
        _ type: Request.Type,
        _ handler: @escaping @Sendable (AuthMethods) -> @Sendable (Request, RequestContext) async throws -> Request.Response
    ) -> RPCRoute {
        guard let methods = session.methods else { return .failure(.notConfigured) }
        let run = handler(methods)
        return .concurrent { params, context in try await run(try Request(decoding: params), context).result }
    }

    /// Tolerated `initialize` members that LSP clients (editors) send.
    public static let editorInitializeKeys: Set<String> = [
        "processId", "clientInfo", "capabilities", "trace", "locale", "rootUri", "rootPath",
        "workspaceFolders", "initializationOptions",
    ]

    /// The members `initialize` takes besides the configuration keys: the editors' and `profile`.
    public static let initializeExtraKeys = editorInitializeKeys.union(["profile"])

    private func initialize(_ params: JSONValue?) throws -> JSONValue {
        let request = try InitializeRequest(decoding: params)
        let (overrides, profile) = (request.overrides, request.profile)
        let base = try options.profiles.base(profile: profile, given: overrides, startup: options.startup)
        let configuration = try overrides.merged(over: base).resolved()
        let configured = try Self.configure(configuration, options: options, logger: logger)
        try session.initialize(with: configured)
        logger.info("initialized", metadata: ["authority": "\(configuration.authority)"])
        let methods = SidecarMethod.allCases.filter { !$0.isDiagnostic || options.diagnostics }
        var result: JSONObject = [
            "serverInfo": ["name": .string(ServerInfo.name), "version": .string(ServerInfo.version)],
            "protocolVersion": .string(ServerInfo.protocolVersion),
            "capabilities": [
                "methods": JSONValue(["shutdown"] + methods.map(\.rawValue)),
                "notifications": ["$/cancelRequest", "exit"],
                "serverRequests": ["openUrl", "pasteSignIn"],
                "serverNotifications": ["deviceCode"],
                "framings": ["ndjson", "lsp"],
            ],
            "configuration": configuration.json,
        ]
        if options.reportsCacheProtection { result["cacheProtection"] = configured.methods.cacheProtection?.json }
        result["agent"] = options.agentInfo?()
        result["profile"] = (profile ?? options.startupProfile).map(JSONValue.string)
        return .object(result)
    }
}
