import AuthCore
import HTTP
import JSONRPC
import Logging
import Loopback
import TokenCache

/// Builds the auth core's application, with its live dependencies, from the configuration.
enum ApplicationFactory {
    static func make(_ configuration: Configuration, logger: Logger) throws(RPCError) -> PublicClientApplication {
        let authority: Authority
        do {
            authority = try Authority(configuration.authority)
        } catch {
            throw .invalidParams("authority: \(error.message)", member: "authority")
        }
        let store: any TokenCacheStore = switch configuration.cache {
        case .memory: MemoryTokenCacheStore()
        case .file(let path): FileTokenCacheStore(path: path, logger: logger)
        }
        let caFile = ProcessEnvironment.value("SSL_CERT_FILE") ?? ProcessEnvironment.value("CURL_CA_BUNDLE")
        let dependencies = AuthDependencies(
            transport: CurlTransport(caFile: caFile, userAgent: "auth-sidecar/\(ServerInfo.version)", logger: logger),
            cache: TokenCache(store: store),
            browser: SystemBrowserLauncher(logger: logger),
            listener: LoopbackRedirectListener(logger: logger),
            logger: logger)
        let client = ClientConfiguration(
            clientId: configuration.clientId, authority: authority, redirectURI: configuration.redirectUri,
            knownAuthorities: configuration.knownAuthorities, defaultScopes: configuration.scopes,
            clientCapabilities: configuration.clientCapabilities, sharedDeviceMode: configuration.sharedDeviceMode)
        return PublicClientApplication(configuration: client, dependencies: dependencies)
    }
}
