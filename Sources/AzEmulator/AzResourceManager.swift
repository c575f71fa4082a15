import Adapters
import AuthSeams
import Composition
import JSON
import Logging
import POSIXSupport
import Sidecar

/// Resource Manager's listings the az shim keeps subscriptions from (`GET {arm}tenants`,
/// `GET {arm}subscriptions`), through the engine's HTTP client (``ApplicationFactory``'s:
/// TLS verified, the CA file of `SSL_CERT_FILE`/`CURL_CA_BUNDLE`, each request limited to
/// `httpTimeoutSeconds`), followed page by page (`nextLink`, on the same endpoint only).
struct AzResourceManager {
    /// Why a listing failed, in one line.
    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Pages followed per listing at most (ARM pages subscriptions by the hundred or the
    /// thousand; 3,000 subscriptions at 100 a page are 30 pages).
    static let maxPages = 1_000
    /// The largest page taken (one answer of 3,000 subscriptions is about 1.3 MB).
    static let maxPageBytes = 32 << 20
    /// Items taken per listing at most, all pages together.
    static let maxItems = 100_000

    let endpoint: String
    /// Each request's time limit: the configuration's `httpTimeoutSeconds`.
    let timeoutSeconds: Int
    let transport: any HTTPTransport

    init(endpoint: String, timeoutSeconds: Int, logger: Logger = Logger(label: "auth-sidecar.az")) {
        self.endpoint = endpoint
        self.timeoutSeconds = timeoutSeconds
        transport = ApplicationFactory.httpTransport(timeoutSeconds: timeoutSeconds, logger: logger)
    }

    /// Every item of the listing at `endpoint` + `path` (`tenants`, `subscriptions`), with the
    /// bearer `token`; the failure in one line.
    func list(path: String, token: String) -> Result<[JSONValue], Failure> {
        var url = endpoint + path + "?api-version=" + AzSubscriptions.apiVersion
        var items: [JSONValue] = []
        for _ in 0..<Self.maxPages {
            let page: JSONValue
            switch get(url, token: token) {
            case .failure(let reason): return .failure(reason)
            case .success(let value): page = value
            }
            items += page["value"]?.arrayValue ?? []
            guard items.count <= Self.maxItems else { return .failure(Failure("Resource Manager lists more than \(Self.maxItems) items")) }
            guard let next = page["nextLink"]?.stringValue, !next.isEmpty else { return .success(items) }
            guard next.hasPrefix(endpoint) else { return .failure(Failure("Resource Manager's nextLink leaves \(endpoint): \(next)")) }
            url = next
        }
        return .failure(Failure("Resource Manager's listing goes on past \(Self.maxPages) pages"))
    }

    /// One GET, its JSON body when the status is 200.
    private func get(_ url: String, token: String) -> Result<JSONValue, Failure> {
        let request = HTTPRequest(
            url: url, headers: [("Authorization", "Bearer " + token), ("Accept", "application/json")],
            timeout: .seconds(timeoutSeconds), maxResponseBytes: Self.maxPageBytes)
        let outcome = PthreadMutex<Result<HTTPResponse, HTTPError>?>(nil)
        let transport = transport
        Task {
            let result: Result<HTTPResponse, HTTPError>
            do throws(HTTPError) { result = .success(try await transport.send(request)) } catch { result = .failure(error) }
            outcome.withLockAndBroadcast { $0 = result }
        }
        // The transfer's own time limit ends it first; this deadline only guards against a lost task.
        let deadline = POSIX.monotonicMilliseconds() + Int64(timeoutSeconds) * 1000 + 5_000
        switch outcome.wait(until: deadline, for: { $0 }) {
        case .failure(let error)?: return .failure(Failure("Resource Manager (\(url)): \(error)"))
        case .success(let response)? where response.status == 200:
            guard let body = try? JSONValue.parse(response.body) else { return .failure(Failure("Resource Manager (\(url)): not JSON")) }
            return .success(body)
        case .success(let response)?:
            let message = (try? JSONValue.parse(response.body))?["error"]?["message"]?.stringValue ?? ""
            return .failure(Failure("Resource Manager (\(url)) answered \(response.status) \(message)"))
        case nil: return .failure(Failure("Resource Manager (\(url)): no answer"))
        }
    }
}
