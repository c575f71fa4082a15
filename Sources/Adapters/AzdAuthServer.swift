import Logging
import Loopback

/// `auth-sidecar azd-auth-server`: azd's external-authentication endpoint on 127.0.0.1
/// (``AzdAuthProtocol``), answering with the signed-in user's tokens: an ``AzdAuthHandler`` on
/// a ``LoopbackHTTPServer`` with the program-facing limits (32 connections, the oldest waiting
/// one evicted, 5 s from accept to the whole request) and the programs-only policy (Host
/// `127.0.0.1:PORT`/`localhost:PORT`, no request from a web page).
public final class AzdAuthServer: Sendable {
    /// The reply for a checked request: a token or a failure (``AzdAuthProtocol/Reply``).
    ///
    /// Called on the connection's own thread, possibly from several connections at once: it
    /// may block, and must be safe to call concurrently.
    public typealias TokenSource = @Sendable (AzdAuthProtocol.TokenRequest) -> AzdAuthProtocol.Reply

    private let server: LoopbackHTTPServer

    /// The port bound on 127.0.0.1.
    public var port: UInt16 { server.port }

    /// Binds 127.0.0.1:`port` (0: any free port).
    public init(
        port requested: UInt16, key: String, limits: ServerLimits = LoopbackHTTPServer.defaultLimits, logger: Logger,
        tokens: @escaping TokenSource
    ) throws(AdapterError) {
        let handler = AzdAuthHandler(key: key, tokens: tokens, logger: logger)
        do {
            server = try LoopbackHTTPServer(port: requested, policy: .programsOnly, limits: limits, handler: handler, logger: logger)
        } catch {
            throw AdapterError(error.description)
        }
    }

    /// The `AZD_AUTH_ENDPOINT` azd is given (it appends `/token?api-version=...`).
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Serves until ``stop()``.
    public func run() { server.run() }

    /// Asks ``run()`` to return (from any thread).
    public func stop() { server.stop() }
}
