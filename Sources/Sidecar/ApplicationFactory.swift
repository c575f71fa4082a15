import AuthCore
import Graph
import HTTP
import JSONRPC
import Logging
import Loopback
import TokenCache

/// Builds the auth core's application, with its live dependencies, from the configuration.
enum ApplicationFactory {
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
        let dependencies = if let replacement { replacement(logger) } else { try live(configuration, logger: logger) }
        var client = ClientConfiguration(
            clientId: configuration.clientId, authority: authority, redirectURI: configuration.redirectUri,
            knownAuthorities: configuration.knownAuthorities, defaultScopes: configuration.scopes,
            clientCapabilities: configuration.clientCapabilities, sharedDeviceMode: configuration.sharedDeviceMode)
        client.instanceDiscovery = configuration.instanceDiscovery
        client.interactiveTimeout = .seconds(configuration.interactiveTimeoutSeconds)
        client.postLogoutRedirectURI = configuration.postLogoutRedirectUri
        let app = PublicClientApplication(configuration: client, dependencies: dependencies)
        var graph = GraphClient(app: app, transport: dependencies.transport, endpoint: configuration.graphEndpoint, logger: logger)
        graph.clock = dependencies.clock
        graph.maxResponseBytes = maxGraphResponseBytes
        return AuthMethods(app: app, graph: graph, browserMode: configuration.browser)
    }

    /// The live dependencies: the configured cache, libcurl, the system browser, the loopback listener.
    private static func live(_ configuration: Configuration, logger: Logger) throws(RPCError) -> AuthDependencies {
        let store: any TokenCacheStore
        var refreshLock: any RefreshLock = NoRefreshLock()
        switch configuration.cache {
        case .memory:
            store = MemoryTokenCacheStore()
        case .file(let path, let keyFile):
            let encryption: AESGCMCacheEncryption?
            do throws(TokenCacheError) {
                encryption = try keyFile.map { (file: String) throws(TokenCacheError) in try AESGCMCacheEncryption(keyFile: file) }
            } catch {
                throw .invalidParams("cache.encryption.keyFile: \(error.reason)", member: "cache.encryption.keyFile")
            }
            store = FileTokenCacheStore(path: path, encryption: encryption, logger: logger)
            refreshLock = FileRefreshLock(path: path + ".refresh.lock")
        }
        let caFile = ProcessEnvironment.value("SSL_CERT_FILE") ?? ProcessEnvironment.value("CURL_CA_BUNDLE")
        let transport = CurlTransport(
            caFile: caFile, userAgent: "\(ServerInfo.name)/\(ServerInfo.version)",
            defaultTimeout: .seconds(configuration.httpTimeoutSeconds), logger: logger)
        return AuthDependencies(
            transport: transport,
            cache: TokenCache(store: store, refreshLock: refreshLock),
            browser: SystemBrowserLauncher(logger: logger),
            listener: LoopbackRedirectListener(logger: logger),
            logger: logger)
    }
}
