import AuthSeams
import Logging

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
        let (listenFD, port) = try LoopbackSockets.listenOnLoopback(port: redirect.port ?? 0)
        let wake: (read: Int32, write: Int32)
        do {
            wake = try LoopbackSockets.wakePair()
        } catch {
            close(listenFD)
            throw error
        }
        let exchange = RedirectExchange(wakeFD: wake.write)
        let loop = ServerLoop(
            listenFD: listenFD, wakeReadFD: wake.read, exchange: exchange,
            evaluator: RedirectRequestEvaluator(redirect: redirect, boundPort: port), logger: logger)
        do {
            try loop.startThread()
        } catch {
            close(listenFD)
            close(wake.read)
            close(wake.write)
            throw error
        }
        logger.info("loopback: listening on 127.0.0.1:\(port) for \(redirect.requestPath)")
        return LoopbackPendingRedirect(redirectURI: redirect.concrete(boundPort: port), port: port, exchange: exchange)
    }
}

/// A listening loopback server waiting for one authorization response.
///
/// Dropping it without `close()` also stops the server (the port is freed shortly after).
public final class LoopbackPendingRedirect: PendingRedirect {
    public let redirectURI: String
    /// The port bound on 127.0.0.1.
    public let port: UInt16
    private let exchange: RedirectExchange

    init(redirectURI: String, port: UInt16, exchange: RedirectExchange) {
        self.redirectURI = redirectURI
        self.port = port
        self.exchange = exchange
    }

    deinit {
        exchange.requestStop()
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
        await exchange.waitUntilStopped()
    }
}
