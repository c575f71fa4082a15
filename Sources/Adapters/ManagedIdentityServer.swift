import Logging
import Loopback

/// `auth-sidecar managed-identity`: the App Service managed-identity endpoint on 127.0.0.1,
/// answering with the signed-in user's tokens (``ManagedIdentityProtocol``): a
/// ``ManagedIdentityHandler`` on a ``LoopbackHTTPServer`` with its limits (32 connections,
/// the oldest waiting one evicted, 5 s from accept to the whole request) and the
/// programs-only policy (Host `127.0.0.1:PORT`/`localhost:PORT`, no request from a web page).
public final class ManagedIdentityServer: Sendable {
    /// A token for a scope, or an error reply (e.g. sign-in needed); `renewal` non-nil: a
    /// fresh one, not the cached one (a revoked token was named), asked with those capabilities.
    ///
    /// Called on the connection's own thread (never on the Swift concurrency pool), possibly
    /// from several connections at once: it may block, and must be safe to call concurrently.
    public typealias TokenSource = @Sendable (_ scope: String, _ renewal: Renewal?) -> Result<Token, ReplyError>

    /// A forced renewal: the client's capabilities (`xms_cc`).
    public struct Renewal: Sendable, Equatable {
        public let capabilities: [String]
    }

    /// What the token source answers with.
    public struct Token: Sendable, Equatable {
        public let token: String
        public let expiresOn: Int64
        public let tokenType: String

        public init(token: String, expiresOn: Int64, tokenType: String) {
            self.token = token
            self.expiresOn = expiresOn
            self.tokenType = tokenType
        }
    }

    private let server: LoopbackHTTPServer

    /// The port bound on 127.0.0.1.
    public var port: UInt16 { server.port }

    /// Binds 127.0.0.1:`port` (0: any free port).
    public init(
        port requested: UInt16, secret: String, clientId: String, limits: ServerLimits = LoopbackHTTPServer.defaultLimits,
        logger: Logger, tokens: @escaping TokenSource
    ) throws(AdapterError) {
        let handler = ManagedIdentityHandler(secret: secret, clientId: clientId, tokens: tokens, logger: logger)
        do {
            server = try LoopbackHTTPServer(port: requested, policy: .programsOnly, limits: limits, handler: handler, logger: logger)
        } catch {
            throw AdapterError(error.description)
        }
    }

    /// The `IDENTITY_ENDPOINT` clients are given.
    public var endpoint: String { "http://127.0.0.1:\(port)\(ManagedIdentityProtocol.path)" }

    /// Connections open now.
    public var connectionCount: Int { server.connectionCount }

    /// Serves until ``stop()``.
    public func run() { server.run() }

    /// Asks ``run()`` to return (from any thread).
    public func stop() { server.stop() }
}
