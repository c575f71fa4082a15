import AuthSeams
import AuthTestSupport
import Logging
import SidecarTestSupport
import Testing
import TokenCache

@testable import Sidecar

/// Configurations alike (the same JSON) share one application; others get their own.
@Suite struct ApplicationRegistryTests {
    static let logger = Logger(label: "test")
    /// The engines' dependencies: no request leaves (every one fails as with the network down).
    static let fakes = InProcessServer.Fakes(transport: FakeHTTPTransport { _ throws(HTTPError) in throw .network("no network here") })

    static func configuration(_ clientId: String = "00001111-aaaa-2222-bbbb-3333cccc4444") -> Configuration {
        Configuration(clientId: clientId, cache: .memory)
    }

    func methods(_ registry: ApplicationRegistry, _ configuration: Configuration) throws -> AuthMethods {
        try registry.methods(
            for: configuration, logger: Self.logger, dependencies: Self.fakes.dependencies,
            maxGraphResponseBytes: 1 << 20)
    }

    @Test func theSameConfigurationSharesOneApplication() throws {
        let registry = ApplicationRegistry()
        let first = try methods(registry, Self.configuration())
        let second = try methods(registry, Self.configuration())
        #expect(first.app === second.app)
        #expect(registry.count == 1)
    }

    @Test func anotherConfigurationGetsItsOwn() throws {
        let registry = ApplicationRegistry()
        let first = try methods(registry, Self.configuration())
        let other = try methods(registry, Self.configuration("55556666-cccc-7777-dddd-8888eeee9999"))
        #expect(first.app !== other.app)
        #expect(registry.count == 2)
        #expect(try methods(registry, Self.configuration()).app === first.app)
    }

    /// A memory cache has nothing to protect: its `cacheProtection` is not in the JSON, so
    /// configurations differing only there are alike.
    @Test func configurationsDifferingOutsideTheirJSONAreAlike() throws {
        let registry = ApplicationRegistry()
        var protected = Self.configuration()
        protected.cacheProtection = .only(.plaintext)
        #expect(protected != Self.configuration())
        #expect(ApplicationRegistry.key(of: protected) == ApplicationRegistry.key(of: Self.configuration()))
        let first = try methods(registry, Self.configuration())
        #expect(try methods(registry, protected).app === first.app)
        #expect(registry.count == 1)
    }

    /// The browser mode is the session's: a verb (`client`) and an editor (`system`) on one
    /// agent share the engine for one cache file, each keeping its own mode.
    @Test func sessionsDifferingOnlyInTheirBrowserShareOneEngine() throws {
        let registry = ApplicationRegistry()
        var verb = Self.configuration()
        verb.browser = .client
        let editor = try methods(registry, Self.configuration())
        let fromVerb = try methods(registry, verb)
        #expect(fromVerb.app === editor.app && registry.count == 1)
        #expect(fromVerb.browserMode == .client && editor.browserMode == .system)
        #expect(try methods(registry, Self.configuration()).browserMode == .system)
        var mail = Self.configuration()
        mail.scopes = ["Mail.Read"]
        let mailSession = try methods(registry, mail)
        #expect(mailSession.app === editor.app && registry.count == 1, "default scopes are the session's too")
        #expect(mailSession.defaultScopes == ["Mail.Read"] && editor.defaultScopes == Self.configuration().scopes)
    }
}
