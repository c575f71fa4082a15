import JSON
import JSONRPC
import Logging
import Synchronization

/// The applications built so far, one per engine identity: sessions configured alike (an
/// agent's connections) share one engine, so one in-memory cache and one refresh per token.
/// What identifies an engine is the configuration without the per-session options: the
/// browser mode (a verb's `browser: "client"`, an editor's `system`) and the default scopes are
/// the session's own (``AuthMethods/browserMode``, ``AuthMethods/defaultScopes``), so a `ping`
/// connection and a `token` verb share one engine.
public final class ApplicationRegistry: Sendable {
    /// An application and the configuration it was built for.
    private struct Entry: Sendable {
        let configuration: Configuration
        /// ``ApplicationRegistry/key(of:)``, made when another configuration is first compared.
        var key: String?
        let methods: AuthMethods
    }

    private let built = Mutex<[Entry]>([])

    public init() {}

    /// The application for `configuration`, built on first use (one process, or one agent,
    /// has one `maxGraphResponseBytes`: its message limit).
    func methods(
        for configuration: Configuration, logger: Logger,
        dependencies: SidecarService.DependencyFactory, maxGraphResponseBytes: Int
    ) throws(RPCError) -> AuthMethods {
        let identity = Self.engineIdentity(configuration)
        var methods: AuthMethods
        if let existing = built.withLock({ Self.find(identity, in: &$0) }) {
            methods = existing
        } else {
            let made = try AuthMethods.make(
                identity, logger: logger, dependencies: dependencies, maxGraphResponseBytes: maxGraphResponseBytes)
            methods = built.withLock { built in
                if let raced = Self.find(identity, in: &built) { return raced }
                built.append(Entry(configuration: identity, methods: made))
                return made
            }
        }
        methods.browserMode = configuration.browser
        methods.defaultScopes = configuration.scopes
        methods.sshCertScope = configuration.sshCertScope
        return methods
    }

    /// `configuration` without the options that are the session's own (the browser mode, the
    /// default scopes, the SSH certificate scope): what identifies an engine.
    static func engineIdentity(_ configuration: Configuration) -> Configuration {
        var identity = configuration
        identity.browser = .system
        identity.scopes = Configuration(clientId: configuration.clientId).scopes
        identity.sshCertScope = nil
        return identity
    }

    /// How many distinct applications exist (for tests and status).
    public var count: Int { built.withLock { $0.count } }

    /// What makes two configurations alike: their JSON, serialized. Made only when there is
    /// something to compare with, so a process serving one configuration (every stdio start)
    /// never serializes it (ARCHITECTURE.md, "Start-up cost").
    static func key(of configuration: Configuration) -> String {
        String(decoding: configuration.json.serialized(), as: UTF8.self)
    }

    /// The application built for a configuration alike, keeping the keys it makes.
    private static func find(_ configuration: Configuration, in entries: inout [Entry]) -> AuthMethods? {
        if let equal = entries.first(where: { $0.configuration == configuration }) { return equal.methods }
        guard !entries.isEmpty else { return nil }
        let wanted = key(of: configuration)
        for index in entries.indices {
            let key = entries[index].key ?? Self.key(of: entries[index].configuration)
            entries[index].key = key
            if key == wanted { return entries[index].methods }
        }
        return nil
    }
}
