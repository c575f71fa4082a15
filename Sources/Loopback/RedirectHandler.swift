import AuthSeams
import Logging
import POSIXSupport

/// The redirect listener's handler on a ``LoopbackHTTPServer``: a redirect that looks right
/// (``RedirectRequestEvaluator/prevalidate(_:)``) waits on its connection's thread until the
/// sign-in names its `state` (at most ``parkTimeoutMilliseconds``), then is decided; the one
/// that matches gets its page, and the sign-in gets the response once the page is out.
struct RedirectHandler: LoopbackHTTPHandler {
    /// A request that arrived before the caller named the expected state waits at most this long.
    static let parkTimeoutMilliseconds: Int64 = 60_000

    let evaluator: RedirectRequestEvaluator
    let exchange: RedirectExchange
    let logger: Logger

    func reply(to request: HTTPServerRequest) -> HTTPReply {
        switch evaluator.prevalidate(request) {
        case .reject(let page, let reason):
            logger.debug("loopback: \(request.method) \(request.path) answered \(page.status.code) (\(reason))")
            return page
        case .parameters(let parameters):
            guard case .named(let expected)? = exchange.awaitExpectedState(until: POSIX.monotonicMilliseconds() + Self.parkTimeoutMilliseconds)
            else {
                return RedirectPages.error(.serviceUnavailable, message: "The application is not waiting for a sign-in.")
            }
            return decide(parameters, expectedState: expected)
        }
    }

    func reply(refusing refusal: HTTPRefusal) -> HTTPReply {
        logger.debug("loopback: request answered \(refusal.status.code) (\(refusal.message))")
        let message =
            switch refusal.status {
            case .requestTimeout: "Request timed out."
            case .misdirected: "Unexpected Host header."
            case .serviceUnavailable: "Too many connections."
            default: "Malformed request."
            }
        return RedirectPages.error(refusal.status, message: message)
    }

    private func decide(_ parameters: [String: String], expectedState: String) -> HTTPReply {
        switch evaluator.decide(parameters, expectedState: expectedState) {
        case .reject(let page, let reason):
            logger.warning("loopback: ignored a redirect request (\(reason)); still waiting")
            return page
        case .accept(let response, var page):
            guard exchange.claim() else {
                return RedirectPages.error(.serviceUnavailable, message: "The application is not waiting for a sign-in.")
            }
            logger.info("loopback: authorization response received (\(response.error.map { "error \($0)" } ?? "code"))")
            let exchange = self.exchange
            page.afterSending = { exchange.finish(.success(response)) }
            return page
        }
    }
}
