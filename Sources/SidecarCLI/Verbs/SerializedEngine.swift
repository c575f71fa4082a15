import Adapters
import JSON
import JSONRPC
import Synchronization

/// A verb's engine connection shared by threads: ``VerbSession`` (its `JSONRPCClient`) is
/// single-threaded, so every request goes through one lock, one at a time. The
/// managed-identity endpoint's connection threads ask for tokens here.
final class SerializedEngine: @unchecked Sendable {
    /// Touched only while `lock` is held (hence `@unchecked Sendable`); `nil` after
    /// ``shutDown()``.
    private var session: VerbSession?
    private let lock = Mutex(())

    init(_ session: VerbSession) { self.session = session }

    /// Waits for the request in flight, then refuses new ones (the caller closes the session).
    func shutDown() {
        lock.withLock { _ in session = nil }
    }

    /// The token for `scope`, acquired silently; else the reply in the SDKs' error shape:
    /// 400 when a sign-in is needed (the message names `auth-sidecar login`), 500 for other
    /// engine errors, 503 when the engine is gone.
    func token(for scope: String) -> Result<ManagedIdentityServer.Token, ReplyError> {
        lock.withLock { _ in
            guard let session else { return .failure(ReplyError(.error(503, "the endpoint is shutting down"))) }
            let outcome: Result<JSONValue, RPCError>
            do throws(VerbFailure) { outcome = try session.outcome("acquireTokenSilent", ["scopes": [.string(scope)]]) } catch {
                return .failure(ReplyError(.error(503, error.message)))
            }
            switch outcome {
            case .success(let result):
                guard let token = result["accessToken"]?.stringValue, let expiresOn = result["expiresOn"]?.intValue else {
                    return .failure(ReplyError(.error(500, "the engine's answer has no accessToken or expiresOn")))
                }
                return .success(.init(token: token, expiresOn: expiresOn, tokenType: result["tokenType"]?.stringValue ?? "Bearer"))
            case .failure(let error):
                return .failure(ReplyError(.error(VerbFailure.isSignInNeeded(error) ? 400 : 500, VerbFailure.from(error).message)))
            }
        }
    }
}
