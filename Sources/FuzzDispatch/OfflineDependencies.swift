import AuthCore
import AuthSeams
import AuthTestSupport
import Logging
import TokenCache

/// The sidecar's dependencies with every side effect kept in the process: an in-memory
/// cache, a transport that fails every request as a network error would, and a browser and a
/// redirect listener that cannot be used. A fuzzed input reaches every handler, its params
/// checking and its error mapping, but never the network or the file system.
enum OfflineDependencies {
    static func make(logger: Logger) -> AuthDependencies {
        AuthDependencies(
            transport: UnreachableTransport(),
            cache: TokenCache(store: MemoryTokenCacheStore()),
            browser: UnusedBrowser(),
            listener: UnusedListener(),
            logger: logger)
    }
}

/// Fails every request at once, as with the network down.
struct UnreachableTransport: HTTPTransport {
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        throw .network("the fuzz target has no network")
    }
}
