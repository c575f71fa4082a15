import AuthSeams
import Logging
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The live `RedirectListener`: a one-shot HTTP/1.1 server on 127.0.0.1 (never 0.0.0.0
/// or ::), on the redirect URI's port or, when it has none, on a free port.
///
/// Only the redirect path is served (other paths: 404), GET with a query or POST with a
/// form body (response_mode=form_post). A request whose `state` is missing or wrong gets
/// a 400 page and the listener keeps waiting, so a page that guesses the port cannot end
/// (or hijack) the sign-in. The matching request gets a success page (or a failure page
/// showing the escaped `error`), then the response is returned and the socket closed.
public struct LoopbackRedirectListener: RedirectListener {
    private let logger: Logger

    /// - Parameter logger: where the listener logs (never codes or parameter values).
    public init(logger: Logger = Logger(label: "auth-sidecar.loopback")) {
        self.logger = logger
    }

    public func start(redirectURI: String) async throws -> any PendingRedirect {
        try startListening(redirectURI: redirectURI)
    }

    /// `start(redirectURI:)` with the concrete type (tests, diagnostics).
    public func startListening(redirectURI: String) throws(LoopbackError) -> LoopbackPendingRedirect {
        let redirect = try RedirectURI(parsing: redirectURI)
        let exchange = RedirectExchange()
        let handler = RedirectHandler(evaluator: RedirectRequestEvaluator(redirect: redirect), exchange: exchange, logger: logger)
        let server = try LoopbackHTTPServer(
            port: redirect.port ?? 0, policy: .browserRedirect, limits: Self.limits, handler: handler, logger: logger)
        do {
            try POSIX.startThread {
                server.run()
                exchange.serverDidStop()
            }
        } catch {
            throw .serverFailed(error.description)
        }
        logger.info("loopback: listening on 127.0.0.1:\(server.port) for \(redirect.requestPath)")
        return LoopbackPendingRedirect(
            redirectURI: redirect.concrete(boundPort: server.port), server: server, exchange: exchange)
    }

    /// A browser opens a few connections at once; 32 at most, and when they are taken the
    /// oldest one still sending its request makes room (slow-loris); 10 s for a request; a
    /// form_post body (code, ID token, state) up to 64 KiB.
    static let limits = ServerLimits(
        maxConnections: 32, atCapacity: .evictOldestWaiting, requestDeadline: .seconds(10),
        maxRequestBody: HTTPRequestParser.maxBodyBytes)
}

/// A listening loopback server waiting for one authorization response.
///
/// Dropping it without `close()` also stops the server (the port is freed shortly after).
public final class LoopbackPendingRedirect: PendingRedirect {
    public let redirectURI: String
    /// The port bound on 127.0.0.1.
    public var port: UInt16 { server.port }
    private let server: LoopbackHTTPServer
    private let exchange: RedirectExchange

    init(redirectURI: String, server: LoopbackHTTPServer, exchange: RedirectExchange) {
        self.redirectURI = redirectURI
        self.server = server
        self.exchange = exchange
    }

    deinit {
        exchange.requestStop()
        server.stop()
    }

    public func response(expectedState: String, timeout: Duration) async throws -> AuthorizationResponse {
        guard !expectedState.isEmpty else { throw LoopbackError.emptyExpectedState }
        try exchange.beginWaiting(expectedState: expectedState)
        let exchange = self.exchange
        let timer = Task {
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { exchange.finish(.failure(LoopbackError.timedOut)) }
        }
        let outcome = await withTaskCancellationHandler {
            await exchange.waitForOutcome()
        } onCancel: {
            exchange.finish(.failure(CancellationError()))
        }
        timer.cancel()
        await close()
        return try outcome.get()
    }

    public func close() async {
        exchange.requestStop()
        server.stop()
        await exchange.waitUntilStopped()
    }
}
