import Adapters
import JSON
import JSONRPC
import Synchronization

/// A verb's engine connection shared by threads: ``VerbSession`` (its `JSONRPCClient`) is
/// single-threaded, so every request goes through one lock, one at a time. The
/// managed-identity and azd endpoints' connection threads ask for tokens here.
///
/// A lost connection (the agent restarted, or was killed) is reopened on the request that
/// finds it lost, and that request is sent again once: to a running agent, else to an engine
/// in this process (``VerbSession/reconnected()``). A long-lived verb never stays broken.
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

    /// Why a token was not acquired.
    struct TokenFailure: Error {
        enum Kind {
            /// The user must sign in (the message names `auth-sidecar login`).
            case signInNeeded
            /// Another engine error, or an answer without a token.
            case failed
            /// The engine is gone and cannot be reached again, or the endpoint is stopping.
            case unavailable
        }

        let kind: Kind
        let message: String
    }

    /// The token for `scope`, acquired silently; else the reply in the SDKs' error shape:
    /// 400 when a sign-in is needed (the message names `auth-sidecar login`), 500 for other
    /// engine errors, 503 when the engine is gone and cannot be reached again.
    func token(for scope: String) -> Result<ManagedIdentityServer.Token, ReplyError> {
        token(["scopes": [.string(scope)]]).mapError { failure in
            switch failure.kind {
            case .signInNeeded: ReplyError(.error(400, failure.message))
            case .failed: ReplyError(.error(500, failure.message))
            case .unavailable: ReplyError(.error(503, failure.message))
            }
        }
    }

    /// A token acquired silently with `params` (`acquireTokenSilent`'s), one request at a time.
    func token(_ params: JSONValue) -> Result<ManagedIdentityServer.Token, TokenFailure> {
        lock.withLock { _ in
            guard session != nil else { return .failure(TokenFailure(kind: .unavailable, message: "the endpoint is shutting down")) }
            let outcome: Result<JSONValue, RPCError>
            do throws(VerbFailure) { outcome = try request("acquireTokenSilent", params) } catch {
                return .failure(TokenFailure(kind: .unavailable, message: error.message))
            }
            switch outcome {
            case .success(let result):
                guard let token = result["accessToken"]?.stringValue, let expiresOn = result["expiresOn"]?.intValue else {
                    return .failure(TokenFailure(kind: .failed, message: "the engine's answer has no accessToken or expiresOn"))
                }
                return .success(.init(token: token, expiresOn: expiresOn, tokenType: result["tokenType"]?.stringValue ?? "Bearer"))
            case .failure(let error):
                return .failure(
                    TokenFailure(kind: VerbFailure.isSignInNeeded(error) ? .signInNeeded : .failed, message: VerbFailure.from(error).message))
            }
        }
    }

    /// Sends a request; when the connection turns out lost, reconnects and sends it once more.
    /// Called with `lock` held.
    private func request(_ method: String, _ params: JSONValue) throws(VerbFailure) -> Result<JSONValue, RPCError> {
        guard let current = session else { throw VerbFailure(message: "the endpoint is shutting down") }
        do {
            return try current.outcome(method, params)
        } catch {
            current.logger.warning("engine connection lost; reconnecting", metadata: ["reason": "\(error.message)"])
            let fresh = try current.reconnected()
            session = fresh
            current.logger.notice("engine connection reopened", metadata: ["engine": "\(fresh.connection.engine)"])
            return try fresh.outcome(method, params)
        }
    }
}
