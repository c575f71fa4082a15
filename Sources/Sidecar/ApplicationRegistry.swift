import JSON
import JSONRPC
import Logging
import Synchronization

/// The applications built so far, one per configuration: sessions configured alike (an
/// agent's connections) share one engine, so one in-memory cache and one refresh per token.
public final class ApplicationRegistry: Sendable {
    private let built = Mutex<[String: AuthMethods]>([:])

    public init() {}

    /// The application for `configuration`, built on first use (one process, or one agent,
    /// has one `maxGraphResponseBytes`: its message limit).
    func methods(
        for configuration: Configuration, logger: Logger,
        replacement: SidecarService.DependencyFactory? = nil, maxGraphResponseBytes: Int
    ) throws(RPCError) -> AuthMethods {
        let key = String(decoding: configuration.json.serialized(), as: UTF8.self)
        if let existing = built.withLock({ $0[key] }) { return existing }
        let made = try ApplicationFactory.make(
            configuration, logger: logger, replacement: replacement, maxGraphResponseBytes: maxGraphResponseBytes)
        return built.withLock { built in
            if let raced = built[key] { return raced }
            built[key] = made
            return made
        }
    }

    /// How many distinct applications exist (for tests and status).
    public var count: Int { built.withLock { $0.count } }
}
