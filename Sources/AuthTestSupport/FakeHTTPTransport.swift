import AuthSeams
import POSIXSupport

/// An ``HTTPTransport`` answering from a script, recording every request. Like
/// `CurlTransport`, it refuses a body over the request's `maxResponseBytes`.
public final class FakeHTTPTransport: HTTPTransport {
    public typealias Responder = @Sendable (HTTPRequest) throws(HTTPError) -> HTTPResponse
    private let responder: Responder
    private let recorded = PthreadMutex<[HTTPRequest]>([])
    private let delay: Duration

    public init(delay: Duration = .zero, _ responder: @escaping Responder) {
        self.responder = responder
        self.delay = delay
    }

    public var requests: [HTTPRequest] { recorded.withLock { $0 } }

    public func requests(to suffix: String) -> [HTTPRequest] { requests.filter { $0.url.hasSuffix(suffix) } }

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        recorded.withLock { $0.append(request) }
        if delay > .zero { try? await Task.sleep(for: delay) }
        let response = try responder(request)
        guard response.body.count <= request.maxResponseBytes else { throw .responseTooLarge(limit: request.maxResponseBytes) }
        return response
    }

    /// The form fields of a POST.
    public static func fields(_ request: HTTPRequest) -> [String: String] {
        (try? FormURLEncoding.decode(Substring(String(decoding: request.body ?? [], as: UTF8.self)))) ?? [:]
    }
}
