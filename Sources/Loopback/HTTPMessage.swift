import AuthSeams

/// The minimal HTTP/1.1 vocabulary of the one-shot loopback server.

/// An HTTP status code and its reason phrase.
public struct HTTPStatus: Sendable, Equatable {
    public var code: Int
    public var reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    public static let ok = HTTPStatus(code: 200, reason: "OK")
    public static let badRequest = HTTPStatus(code: 400, reason: "Bad Request")
    public static let unauthorized = HTTPStatus(code: 401, reason: "Unauthorized")
    public static let forbidden = HTTPStatus(code: 403, reason: "Forbidden")
    public static let notFound = HTTPStatus(code: 404, reason: "Not Found")
    public static let methodNotAllowed = HTTPStatus(code: 405, reason: "Method Not Allowed")
    public static let requestTimeout = HTTPStatus(code: 408, reason: "Request Timeout")
    public static let payloadTooLarge = HTTPStatus(code: 413, reason: "Content Too Large")
    public static let unsupportedMediaType = HTTPStatus(code: 415, reason: "Unsupported Media Type")
    public static let misdirected = HTTPStatus(code: 421, reason: "Misdirected Request")
    public static let headersTooLarge = HTTPStatus(code: 431, reason: "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(code: 500, reason: "Internal Server Error")
    public static let notImplemented = HTTPStatus(code: 501, reason: "Not Implemented")
    public static let serviceUnavailable = HTTPStatus(code: 503, reason: "Service Unavailable")
    public static let versionNotSupported = HTTPStatus(code: 505, reason: "HTTP Version Not Supported")

    private static let known: [HTTPStatus] = [
        .ok, .badRequest, .unauthorized, .forbidden, .notFound, .methodNotAllowed, .requestTimeout, .payloadTooLarge,
        .unsupportedMediaType, .misdirected, .headersTooLarge, .internalServerError, .notImplemented, .serviceUnavailable,
        .versionNotSupported,
    ]

    /// The status with `code` and the reason phrase the constants above give it ("Error" for
    /// any other code).
    public init(code: Int) {
        self = Self.known.first { $0.code == code } ?? HTTPStatus(code: code, reason: "Error")
    }
}

/// A request a loopback server received: request line, headers (names lower-cased) and body.
/// (Not AuthSeams' `HTTPRequest`, which is one this program sends.)
public struct HTTPServerRequest: Sendable, Equatable {
    public var method: String
    /// The raw (percent-encoded) path of the origin-form target.
    public var path: String
    /// The raw query, without `?` (empty when absent).
    public var query: String
    public var version: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, path: String, query: String, version: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The value of the first header called `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name == lowered }?.value
    }

    /// The headers by (lower-cased) name; of a repeated header, the first value.
    public var headerFields: [String: String] {
        Dictionary(headers.map { ($0.name, $0.value) }) { first, _ in first }
    }

    public static func == (lhs: HTTPServerRequest, rhs: HTTPServerRequest) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.query == rhs.query
            && lhs.version == rhs.version && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// A complete response; every response closes the connection.
public struct HTTPReply: Sendable, Equatable {
    public var status: HTTPStatus
    public var body: String
    public var contentType = "text/html; charset=utf-8"
    public var extraHeaders: [(String, String)] = []
    /// Runs once the reply is written (or the client went away): what must wait until the
    /// client has its page (the redirect listener hands the sign-in on then). Not compared.
    public var afterSending: (@Sendable () -> Void)?

    public init(
        status: HTTPStatus, body: String, contentType: String = "text/html; charset=utf-8", extraHeaders: [(String, String)] = [],
        afterSending: (@Sendable () -> Void)? = nil
    ) {
        self.status = status
        self.body = body
        self.contentType = contentType
        self.extraHeaders = extraHeaders
        self.afterSending = afterSending
    }

    public static func == (lhs: HTTPReply, rhs: HTTPReply) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body && lhs.contentType == rhs.contentType
    }

    /// The bytes on the wire. Pages are never cached, never framed, never sniffed,
    /// leak no referrer and may load nothing (CSP `default-src 'none'`).
    public func serialized() -> [UInt8] {
        let bodyBytes = Array(body.utf8)
        var head = "HTTP/1.1 \(status.code) \(status.reason)\r\n"
        head += "Content-Type: \(contentType)\r\n"
        head += "Content-Length: \(bodyBytes.count)\r\n"
        head += "Cache-Control: no-store\r\n"
        head += "Pragma: no-cache\r\n"
        head += "X-Content-Type-Options: nosniff\r\n"
        head += "X-Frame-Options: DENY\r\n"
        head += "Referrer-Policy: no-referrer\r\n"
        head += "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\n"
        for (name, value) in extraHeaders { head += "\(name): \(value)\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + bodyBytes
    }
}
