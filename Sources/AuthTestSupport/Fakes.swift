/// Test doubles for the auth core's seams, shared by the test targets.
import AuthSeams
import Synchronization
import AuthCore
import TokenCache

/// An ``HTTPTransport`` answering from a script, recording every request.
public final class FakeHTTPTransport: HTTPTransport {
    public typealias Responder = @Sendable (HTTPRequest) throws(HTTPError) -> HTTPResponse
    private let responder: Responder
    private let recorded = Mutex<[HTTPRequest]>([])
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
        return try responder(request)
    }

    /// The form fields of a POST.
    public static func fields(_ request: HTTPRequest) -> [String: String] {
        (try? FormURLEncoding.decode(Substring(String(decoding: request.body ?? [], as: UTF8.self)))) ?? [:]
    }
}

/// A clock the test moves.
/// Its `sleep` returns at once, moving the time by the duration (rounded up to seconds)
/// and recording it.
public final class ManualClock: AuthClock {
    private let current: Mutex<Int64>
    private let slept = Mutex<[Duration]>([])
    public init(_ start: Int64 = 1_700_000_000) { current = Mutex(start) }
    public func now() -> Int64 { current.withLock { $0 } }
    public func advance(_ seconds: Int64) { current.withLock { $0 += seconds } }

    /// Every duration `sleep` was asked for, in order.
    public var sleeps: [Duration] { slept.withLock { $0 } }

    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        slept.withLock { $0.append(duration) }
        let (seconds, attoseconds) = duration.components
        advance(seconds + (attoseconds > 0 ? 1 : 0))
        await Task.yield()
    }
}

/// A browser that never opens anything (the silent tests must not need one).
public struct UnusedBrowser: BrowserLauncher {
    public init() {}
    public func open(_ url: String) async throws { throw BrowserError.unavailable("no browser in this test") }
}

/// A listener that must not be used.
public struct UnusedListener: RedirectListener {
    public init() {}
    public func start(redirectURI: String) async throws -> any PendingRedirect { throw LoopbackError.closed }
}

/// Builds unsigned JWTs and token endpoint answers.
public enum Tokens {
    public static func jwt(_ claims: String) -> String {
        Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + "."
    }

    /// The claims of the fake service's ID tokens: valid for client `client` at
    /// `https://login.microsoftonline.com` (tenant `tid-1`) until 2100.
    public static let idTokenClaims = """
        {"oid":"oid-1","tid":"tid-1","preferred_username":"alice@contoso.com","name":"Alice","aud":"client",\
        "iss":"https://login.microsoftonline.com/tid-1/v2.0","exp":4102444800}
        """

    public static let clientInfo = Base64URL.encode(Array(#"{"uid":"oid-1","utid":"tid-1"}"#.utf8))

    public static func tokenResponse(accessToken: String, expiresIn: Int = 3600, refreshToken: String = "rt-1",
                              scope: String = "User.Read openid profile offline_access") -> HTTPResponse {
        let idToken = jwt(idTokenClaims)
        let body = """
            {"token_type":"Bearer","access_token":"\(accessToken)","expires_in":\(expiresIn),"refresh_token":"\(refreshToken)",\
            "id_token":"\(idToken)","client_info":"\(clientInfo)","scope":"\(scope)"}
            """
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    /// Instance discovery for Microsoft's public cloud.
    public static let instanceDiscovery = HTTPResponse(status: 200, body: Array("""
        {"tenant_discovery_endpoint":"https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration",\
        "metadata":[{"preferred_network":"login.microsoftonline.com","preferred_cache":"login.windows.net",\
        "aliases":["login.microsoftonline.com","login.windows.net","login.microsoft.com","sts.windows.net"]}]}
        """.utf8))

    /// Discovery documents (instance or OIDC) for `request`, `nil` for anything else.
    public static func discoveryAnswer(for request: HTTPRequest) -> HTTPResponse? {
        if request.url.contains("/common/discovery/instance") { return instanceDiscovery }
        if request.url.hasSuffix("openid-configuration") { return discovery }
        return nil
    }

    public static let discovery = HTTPResponse(status: 200, body: Array("""
        {"authorization_endpoint":"https://login.microsoftonline.com/common/oauth2/v2.0/authorize",\
        "token_endpoint":"https://login.microsoftonline.com/common/oauth2/v2.0/token",\
        "end_session_endpoint":"https://login.microsoftonline.com/common/oauth2/v2.0/logout",\
        "issuer":"https://login.microsoftonline.com/{tenantid}/v2.0"}
        """.utf8))
}

/// A store that counts its transactions (each one is a lock round trip on a file store) and
/// its reads (each one a `stat` of an unchanged file).
public final class CountingTokenCacheStore: TokenCacheStore {
    private let inner = MemoryTokenCacheStore()
    private let count = Mutex((transactions: 0, reads: 0))

    public init() {}

    public var transactions: Int { count.withLock { $0.transactions } }

    public var reads: Int { count.withLock { $0.reads } }

    public func transaction<T: Sendable>(_ body: (inout CacheDocument) throws -> T) throws -> T {
        count.withLock { $0.transactions += 1 }
        return try inner.transaction(body)
    }

    public func read<T: Sendable>(_ body: (CacheDocument) throws -> T) throws -> T {
        count.withLock { $0.reads += 1 }
        return try inner.read(body)
    }

    public func changeToken() throws -> CacheChangeToken { try inner.changeToken() }
}
