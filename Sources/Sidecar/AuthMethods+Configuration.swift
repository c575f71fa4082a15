import AuthCore
import Graph
import JSONRPC
import Logging

extension AuthMethods {
    /// The auth core's application built from the configuration over the dependencies
    /// `dependencies` makes (the door's composition root: the live ones, or a test's).
    /// - Parameter maxGraphResponseBytes: the largest Graph answer relayed (the message limit).
    static func make(
        _ configuration: Configuration, logger: Logger,
        dependencies: SidecarService.DependencyFactory, maxGraphResponseBytes: Int
    ) throws(RPCError) -> AuthMethods {
        let authority: Authority
        do throws(AuthError) {
            authority = try Authority(configuration.authority, declared: configuration.authorityType.flatMap(Authority.Kind.init))
        } catch {
            throw .invalidParams("authority: \(error.message)", member: "authority")
        }
        let made = try dependencies(configuration, logger)
        let dependencies = made.auth
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
            app: app, graph: graph, browserMode: configuration.browser, defaultScopes: configuration.scopes,
            cacheProtection: made.cacheProtection)
    }
}
