/// One HTTP request.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    /// Header fields in order (names as given).
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]?
    /// The whole exchange must finish within this time; `nil`: the transport's default
    /// (``CurlTransport/defaultTimeout``, the `httpTimeoutSeconds` setting).
    public var timeout: Duration?
    /// The largest response body accepted, in bytes (decoded, after any `Content-Encoding`);
    /// the response's header block has the same limit. A larger answer ends the transfer at
    /// once: ``HTTPError/responseTooLarge(limit:)``.
    public var maxResponseBytes: Int

    /// The identity service's answers (discovery documents, token responses): 1 MiB.
    public static let defaultMaxResponseBytes = 1 << 20

    public init(
        method: String = "GET", url: String, headers: [(name: String, value: String)] = [],
        body: [UInt8]? = nil, timeout: Duration? = nil, maxResponseBytes: Int = defaultMaxResponseBytes
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }

    /// A POST of `application/x-www-form-urlencoded` fields (OAuth token requests).
    public static func form(
        url: String, fields: [(String, String)], headers: [(name: String, value: String)] = [],
        timeout: Duration? = nil
    ) -> HTTPRequest {
        let body = fields.map { "\(FormEncoding.escape($0.0))=\(FormEncoding.escape($0.1))" }.joined(separator: "&")
        return HTTPRequest(
            method: "POST", url: url,
            headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers,
            body: Array(body.utf8), timeout: timeout)
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body && lhs.timeout == rhs.timeout
            && lhs.maxResponseBytes == rhs.maxResponseBytes
            && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

/// One HTTP response (any status: a 4xx/5xx is a response, not an error).
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header fields in order, names lower-cased.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers.map { ($0.name.lowercased(), $0.value) }
        self.body = body
    }

    /// The first value of the header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name == lower }?.value
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// Why no response arrived.
public enum HTTPError: Error, Sendable, Equatable {
    /// DNS, connection refused or reset, a broken transfer.
    case network(String)
    /// The request took longer than its timeout.
    case timedOut
    /// The TLS handshake or certificate verification failed.
    case tls(String)
    /// The URL is malformed, or not HTTPS for a non-loopback host.
    case insecureOrInvalidURL(String)
    /// libcurl could not be loaded, or cannot restrict a transfer to HTTP(S) (then no
    /// request is sent).
    case libraryUnavailable(String)
    /// The response (body or header block) is larger than ``HTTPRequest/maxResponseBytes``;
    /// the transfer was aborted at that point.
    case responseTooLarge(limit: Int)
    case cancelled
}

/// Sends HTTP requests. The live implementation is ``CurlTransport``; tests inject fakes.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the response, whatever its status.
    /// - Throws: ``HTTPError``; `CancellationError` semantics via ``HTTPError/cancelled``.
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse
}

/// `application/x-www-form-urlencoded` and URL query encoding (decoding: `Loopback.FormURLEncoding`).
public enum FormEncoding {
    /// Percent-encodes everything but unreserved characters (RFC 3986).
    public static func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// A query string from fields: `a=1&b=x%20y`.
    public static func query(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
