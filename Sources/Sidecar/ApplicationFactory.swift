import AuthCore
import AuthSeams
import DBusBroker
import Graph
import HTTP
import JSONRPC
import Logging
import Loopback
import TokenCache

/// Builds the auth core's application, with its live dependencies, from the configuration.
public enum ApplicationFactory {
    /// - Parameter replacement: when given, builds the dependencies instead of the live ones
    ///   (the configuration's cache, libcurl, the system browser, the loopback listener).
    /// - Parameter maxGraphResponseBytes: the largest Graph answer relayed (the message limit).
    static func make(
        _ configuration: Configuration, logger: Logger,
        replacement: SidecarService.DependencyFactory? = nil, maxGraphResponseBytes: Int
    ) throws(RPCError) -> AuthMethods {
        let authority: Authority
        do throws(AuthError) {
            authority = try Authority(configuration.authority, declared: configuration.authorityType.flatMap(Authority.Kind.init))
        } catch {
            throw .invalidParams("authority: \(error.message)", member: "authority")
        }
        var report: CacheProtectionReport?
        let dependencies = if let replacement { replacement(logger) } else { try live(configuration, logger: logger, report: &report) }
        var client = ClientConfiguration(
            clientId: configuration.clientId, authority: authority, redirectURI: configuration.redirectUri,
            knownAuthorities: configuration.knownAuthorities, defaultScopes: configuration.scopes,
            clientCapabilities: configuration.clientCapabilities, sharedDeviceMode: configuration.sharedDeviceMode)
        client.instanceDiscovery = configuration.instanceDiscovery
        client.interactiveTimeout = .seconds(configuration.interactiveTimeoutSeconds)
        client.postLogoutRedirectURI = configuration.postLogoutRedirectUri
        client.brokerMode = configuration.broker
        client.brokerSilentRescue = configuration.brokerSilentRescue
        // The broker's sign-ins read it too (no time limit with a display).
        client.display = SignInEnvironment.displayVariable()
        client.brokerTimeout = .seconds(configuration.httpTimeoutSeconds)
        client.clientAssertion = configuration.clientAssertion?.source()
        let app = PublicClientApplication(configuration: client, dependencies: dependencies)
        var graph = GraphClient(app: app, transport: dependencies.transport, endpoint: configuration.graphEndpoint, logger: logger)
        graph.clock = dependencies.clock
        graph.maxResponseBytes = maxGraphResponseBytes
        return AuthMethods(
            app: app, graph: graph, browserMode: configuration.browser, defaultScopes: configuration.scopes, cacheProtection: report)
    }

    /// The engine's HTTP client: libcurl (TLS verified, the CA file of `SSL_CERT_FILE` or
    /// `CURL_CA_BUNDLE`), each request limited to `httpTimeoutSeconds` unless it says otherwise.
    /// The az emulator's Resource Manager calls go through one made here too.
    public static func httpTransport(timeoutSeconds: Int, logger: Logger) -> any HTTPTransport {
        let caFile = ProcessEnvironment.value("SSL_CERT_FILE") ?? ProcessEnvironment.value("CURL_CA_BUNDLE")
        return CurlTransport(
            caFile: caFile, userAgent: "\(ServerInfo.name)/\(ServerInfo.version)", defaultTimeout: .seconds(timeoutSeconds),
            logger: logger)
    }

    /// The live dependencies: the configured cache, libcurl, the system browser, the loopback listener.
    private static func live(
        _ configuration: Configuration, logger: Logger, report: inout CacheProtectionReport?
    ) throws(RPCError) -> AuthDependencies {
        let store: any TokenCacheStore
        var refreshLock: any RefreshLock = NoRefreshLock()
        var refreshErrors: any RefreshErrorLog = MemoryRefreshErrorLog()
        var popKeyFile: PopKeyFile?
        switch configuration.cache {
        case .memory:
            store = MemoryTokenCacheStore()
        case .file(let path, let keyFile, let keyCommand):
            let protection = configuration.cacheProtection
            let resolution: CacheKeyResolution
            do throws(CacheProtectionError) {
                let sources = CacheKeyStore.sources(
                    for: protection, cachePath: path, keyFile: keyFile, keyCommand: keyCommand,
                    secretServiceKeyCopySeconds: configuration.secretServiceKeyCacheSeconds)
                resolution = try CacheKeyStore.resolve(protection, sources: sources, cachePath: path)
            } catch {
                // A configured key file that cannot be used is a configuration error, as it always was.
                if error.skipped.first?.layer == .keyFile, keyFile != nil, let reason = error.skipped.first?.reason {
                    throw .invalidParams("cache.encryption.keyFile: \(reason)", member: "cache.encryption.keyFile")
                }
                throw RPCError(
                    code: AuthErrorMapping.code(for: .cacheUnavailable), message: error.message, name: "cacheUnavailable",
                    data: [
                        "layers": .array(
                            error.skipped.map {
                                ["layer": .string($0.layer.rawValue), "reason": .string($0.reason), "enable": .string($0.enable)]
                            })
                    ])
            }
            // A key a layer just made cannot open a cache sealed before by a layer that provably
            // lost its key (a reboot, an expiry): set aside. Any other such file is left alone.
            let file = FileTokenCacheStore(
                path: path, encryption: resolution.encryption,
                setAsideUnopenable: resolution.created, keylessLayers: resolution.keyless, logger: logger)
            // Start-up reads the cache once: a plaintext file is migrated now, a sealed one
            // whose key is gone is set aside now (errors are reported by the first request).
            if resolution.encryption != nil { _ = try? file.changeToken() }
            report = CacheProtectionReport(setting: protection, resolution: resolution, store: file)
            store = file
            refreshLock = FileRefreshLock(path: file.layout.refreshLock)
            refreshErrors = FileRefreshErrorLog(path: file.layout.lastRefreshError)
            // The PoP key beside the cache, sealed under its key; a plaintext cache keeps none.
            popKeyFile = resolution.encryption.map { PopKeyFile(layout: file.layout, encryption: $0) }
        }
        var dependencies = AuthDependencies(
            transport: httpTransport(timeoutSeconds: configuration.httpTimeoutSeconds, logger: logger),
            cache: TokenCache(store: store, refreshLock: refreshLock, refreshErrors: refreshErrors),
            browser: SystemBrowserLauncher(logger: logger),
            listener: LoopbackRedirectListener(logger: logger),
            logger: logger)
        // Made only when asked for: a start that does not use the broker never loads libdbus.
        if configuration.broker != .off { dependencies.broker = SessionBusBroker() }
        dependencies.newCorrelationId = { AuthJSON.correlationId() }
        dependencies.popKeys = PopKeyHolder(file: popKeyFile)
        return dependencies
    }
}
