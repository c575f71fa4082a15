/// Which requests a loopback endpoint serves at all, before its handler sees them: the Host
/// it must be addressed as (a DNS-rebinding page names its own host) and whether requests a
/// browser sends for another site's page are refused. A value each endpoint sets once.
public struct RequestPolicy: Sendable, Equatable {
    /// Whether requests made by a web page are refused: an `Origin` header, or
    /// `Sec-Fetch-Site: cross-site`/`same-site`. Programs (SDKs, curl) send neither.
    public var refusesBrowserRequests: Bool
    /// Whether an HTTP/1.0 request may leave `Host` out (HTTP/1.1 requires it).
    public var acceptsHTTP10WithoutHost: Bool

    /// The managed-identity and azd endpoints: addressed as `127.0.0.1:PORT` or
    /// `localhost:PORT`, never from a web page.
    public static let programsOnly = RequestPolicy(refusesBrowserRequests: true, acceptsHTTP10WithoutHost: false)
    /// The redirect listener: the browser brings the sign-in's answer from the identity
    /// service's page (a cross-site form post), addressed to this listener.
    public static let browserRedirect = RequestPolicy(refusesBrowserRequests: false, acceptsHTTP10WithoutHost: true)

    public init(refusesBrowserRequests: Bool, acceptsHTTP10WithoutHost: Bool = false) {
        self.refusesBrowserRequests = refusesBrowserRequests
        self.acceptsHTTP10WithoutHost = acceptsHTTP10WithoutHost
    }

    /// Nil when `request` may be served on `port`; else why not (the endpoint words the reply).
    public func refusal(of request: HTTPServerRequest, port: UInt16) -> HTTPRefusal? {
        let omitted = request.header("host") == nil && acceptsHTTP10WithoutHost && request.version == "HTTP/1.0"
        guard omitted || request.header("host").map({ Self.isLoopback(host: $0, port: port) }) == true else {
            return HTTPRefusal(.misdirected, "the Host header must be 127.0.0.1:\(port) or localhost:\(port)")
        }
        if refusesBrowserRequests {
            if request.header("origin") != nil {
                return HTTPRefusal(.forbidden, "requests from web pages (with an Origin header) are refused")
            }
            if let site = request.header("sec-fetch-site")?.lowercased(), site == "cross-site" || site == "same-site" {
                return HTTPRefusal(.forbidden, "requests from web pages (Sec-Fetch-Site: \(site)) are refused")
            }
        }
        return nil
    }

    /// `127.0.0.1:PORT` or `localhost:PORT` (case-insensitive host), exactly.
    static func isLoopback(host: String, port: UInt16) -> Bool {
        let lowered = host.lowercased()
        return lowered == "127.0.0.1:\(port)" || lowered == "localhost:\(port)"
    }
}

/// A request refused before its handler: the status and one sentence saying why.
public struct HTTPRefusal: Error, Sendable, Equatable {
    public let status: HTTPStatus
    public let message: String

    public init(_ status: HTTPStatus, _ message: String) {
        self.status = status
        self.message = message
    }
}
