import Adapters
import AuthSeams
import HTTP
import JSON
import Logging
import POSIXSupport
import Sidecar

/// Resource Manager's listings the az shim keeps subscriptions from (`GET {arm}tenants`,
/// `GET {arm}subscriptions`), over libcurl as the engine's requests go (TLS verified, the CA
/// file of `SSL_CERT_FILE`/`CURL_CA_BUNDLE`), followed page by page (`nextLink`, on the same
/// endpoint only, at most ``maxPages``).
enum AzResourceManager {
    /// Why a listing failed, in one line.
    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Pages followed per listing at most.
    static let maxPages = 20

    /// Every item of the listing at `endpoint` + `path` (`tenants`, `subscriptions`), with the
    /// bearer `token`; the failure in one line.
    static func list(endpoint: String, path: String, token: String) -> Result<[JSONValue], Failure> {
        var url = endpoint + path + "?api-version=" + AzSubscriptions.apiVersion
        var items: [JSONValue] = []
        for _ in 0..<maxPages {
            let page: JSONValue
            switch get(url, token: token) {
            case .failure(let reason): return .failure(reason)
            case .success(let value): page = value
            }
            items += page["value"]?.arrayValue ?? []
            guard let next = page["nextLink"]?.stringValue, !next.isEmpty else { return .success(items) }
            guard next.hasPrefix(endpoint) else { return .failure(Failure("Resource Manager's nextLink leaves \(endpoint): \(next)")) }
            url = next
        }
        return .success(items)
    }

    /// One GET, its JSON body when the status is 200.
    private static func get(_ url: String, token: String) -> Result<JSONValue, Failure> {
        let caFile = ProcessEnvironment.value("SSL_CERT_FILE") ?? ProcessEnvironment.value("CURL_CA_BUNDLE")
        let transport = CurlTransport(caFile: caFile, logger: Logger(label: "auth-sidecar.az"))
        let request = HTTPRequest(url: url, headers: [("Authorization", "Bearer " + token), ("Accept", "application/json")])
        let outcome = PthreadMutex<Result<HTTPResponse, HTTPError>?>(nil)
        Task {
            let result: Result<HTTPResponse, HTTPError>
            do throws(HTTPError) { result = .success(try await transport.send(request)) } catch { result = .failure(error) }
            outcome.withLockAndBroadcast { $0 = result }
        }
        // The transfer's own time limit ends it first; this deadline only guards against a lost task.
        let deadline = POSIX.monotonicMilliseconds() + 120_000
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
