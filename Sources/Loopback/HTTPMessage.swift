import AuthSeams

/// The minimal HTTP/1.1 vocabulary of the one-shot loopback server.

/// An HTTP status code and its reason phrase.
struct HTTPStatus: Sendable, Equatable {
    var code: Int
    var reason: String

    static let ok = HTTPStatus(code: 200, reason: "OK")
    static let badRequest = HTTPStatus(code: 400, reason: "Bad Request")
    static let notFound = HTTPStatus(code: 404, reason: "Not Found")
    static let methodNotAllowed = HTTPStatus(code: 405, reason: "Method Not Allowed")
    static let requestTimeout = HTTPStatus(code: 408, reason: "Request Timeout")
    static let payloadTooLarge = HTTPStatus(code: 413, reason: "Content Too Large")
    static let unsupportedMediaType = HTTPStatus(code: 415, reason: "Unsupported Media Type")
    static let misdirected = HTTPStatus(code: 421, reason: "Misdirected Request")
    static let headersTooLarge = HTTPStatus(code: 431, reason: "Request Header Fields Too Large")
    static let notImplemented = HTTPStatus(code: 501, reason: "Not Implemented")
    static let serviceUnavailable = HTTPStatus(code: 503, reason: "Service Unavailable")
    static let versionNotSupported = HTTPStatus(code: 505, reason: "HTTP Version Not Supported")
}

/// A parsed request: request line, headers (names lower-cased) and body.
struct HTTPRequest: Sendable, Equatable {
    var method: String
    /// The raw (percent-encoded) path of the origin-form target.
    var path: String
    /// The raw query, without `?` (empty when absent).
    var query: String
    var version: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The value of the first header called `name` (case-insensitive).
    func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name == lowered }?.value
    }

    static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.query == rhs.query
            && lhs.version == rhs.version && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// A complete response; every response closes the connection.
struct HTTPReply: Sendable, Equatable {
    var status: HTTPStatus
    var body: String
    var contentType = "text/html; charset=utf-8"
    var extraHeaders: [(String, String)] = []

    static func == (lhs: HTTPReply, rhs: HTTPReply) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body && lhs.contentType == rhs.contentType
    }

    /// The bytes on the wire. Pages are never cached, never framed, never sniffed,
    /// leak no referrer and may load nothing (CSP `default-src 'none'`).
    func serialized() -> [UInt8] {
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
