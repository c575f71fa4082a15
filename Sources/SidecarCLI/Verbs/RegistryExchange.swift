import AuthSeams
import Composition
import JSON
import Logging
import POSIXSupport
import Sidecar

/// Azure Container Registry's token exchange, as `az acr login` does it: an Entra access token
/// posted to `https://REGISTRY/oauth2/exchange` (`grant_type=access_token`, `service`,
/// `tenant`, `access_token`) for the registry's refresh token. Through the engine's HTTP client
/// (`ApplicationFactory.httpTransport`: libcurl, TLS verified, the CA file of
/// `SSL_CERT_FILE`/`CURL_CA_BUNDLE`, no redirect followed), to the registry named only: the
/// caller has checked it is ACR's or configured.
enum RegistryExchange {
    /// Why the exchange failed, in one line.
    struct Failure: Error {
        let reason: String
    }

    /// The largest answer read (a refresh token is about 2 KB).
    static let maxResponseBytes = 64 * 1024

    /// The registry's refresh token for `accessToken` of `tenant`.
    static func refreshToken(registry: String, accessToken: String, tenant: String) -> Result<String, Failure> {
        let url = "https://\(registry)/oauth2/exchange"
        var request = HTTPRequest.form(
            url: url,
            fields: [("grant_type", "access_token"), ("service", registry), ("tenant", tenant), ("access_token", accessToken)],
            headers: [("Accept", "application/json")], timeout: .seconds(30))
        request.maxResponseBytes = maxResponseBytes
        switch send(request) {
        case .failure(let error):
            return .failure(Failure(reason: "\(url): \(error)"))
        case .success(let response) where response.status == 200:
            guard let token = (try? JSONValue.parse(response.body))?["refresh_token"]?.stringValue, !token.isEmpty else {
                return .failure(Failure(reason: "\(url) answered 200 without a refresh_token"))
            }
            return .success(token)
        case .success(let response):
            let message = (try? JSONValue.parse(response.body))?["errors"]?.arrayValue?.first?["message"]?.stringValue ?? ""
            return .failure(Failure(reason: "\(url) answered \(response.status) \(message)"))
        }
    }

    /// Sends `request` and waits for its outcome on this thread (a verb's own, not the pool's).
    private static func send(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPError> {
        let transport = ApplicationFactory.httpTransport(timeoutSeconds: 30, logger: Logger(label: "auth-sidecar.registry"))
        let outcome = PthreadMutex<Result<HTTPResponse, HTTPError>?>(nil)
        Task {
            let result: Result<HTTPResponse, HTTPError>
            do throws(HTTPError) { result = .success(try await transport.send(request)) } catch { result = .failure(error) }
            outcome.withLockAndBroadcast { $0 = result }
        }
        // The transfer's own time limit ends it first; this deadline only guards against a lost task.
        let deadline = POSIX.monotonicMilliseconds() + 60_000
        return outcome.wait(until: deadline, for: { $0 }) ?? .failure(.timedOut)
    }
}
