import Adapters
import Dispatch
import JSON
import JSONRPC
import Sidecar
import Synchronization

/// The engine connections of a long-lived verb whose threads ask for tokens at once (the
/// managed-identity and azd endpoints' connection threads). ``VerbSession`` (its
/// `JSONRPCClient`) is single-threaded, so a request takes an idle session, or opens another
/// one like the first (``VerbSession/sibling()``) up to ``maxSessions``, and gives it back:
/// requests for different scopes run concurrently, so a slow refresh for one scope never
/// stalls another's clients. The sessions reach one engine (the agent's, or this process's:
/// in-process engines share one registry), whose refresh coordinator and refresh lock still
/// make one refresh per token.
///
/// A lost connection (the agent restarted, or was killed) is reopened on the request that
/// finds it lost, and that request is sent again once: to a running agent, else to an engine
/// in this process (``VerbSession/reconnected()``). A long-lived verb never stays broken.
final class EnginePool: @unchecked Sendable {
    /// The most sessions open at once (each an engine connection, two threads in process).
    static let maxSessions = 16

    /// Sessions not in use; `nil` after ``shutDown()``. Touched only under the lock (hence
    /// `@unchecked Sendable`: a `VerbSession` is used by one thread at a time, the one that
    /// took it from here).
    private let idle = Mutex<[VerbSessionBox]?>([])
    /// Admission: one permit per session that may be open.
    private let permits = DispatchSemaphore(value: EnginePool.maxSessions)
    /// The first session, which siblings copy.
    private let template: VerbSessionBox

    init(_ session: VerbSession) {
        template = VerbSessionBox(session)
        idle.withLock { $0 = [template] }
    }

    /// Refuses new requests and closes the idle sessions; requests in flight finish (the
    /// caller closes the first session).
    func shutDown() {
        let sessions = idle.withLock { idle in
            defer { idle = nil }
            return idle ?? []
        }
        for box in sessions where box !== template { box.session.close() }
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
    func token(for scope: String, renewal: LocalTokenServer.Renewal? = nil) -> Result<LocalTokenServer.Token, ReplyError> {
        var request = AcquireTokenSilentRequest(scopes: [scope])
        if let renewal {
            request.forceRefresh = true
            request.claims = ManagedIdentityProtocol.capabilityClaims(renewal.capabilities).map(\.jsonText)
        }
        return token(request).mapError { failure in
            switch failure.kind {
            case .signInNeeded: ReplyError(.error(400, failure.message))
            case .failed: ReplyError(.error(500, failure.message))
            case .unavailable: ReplyError(.error(503, failure.message))
            }
        }
    }

    /// Requests in flight by their params' text: identical requests that come while one runs
    /// wait for its answer instead of taking a session each, so one scope's clients, however
    /// many, hold one session and never all of them.
    private let flights = Mutex<[String: Flight]>([:])

    /// A token acquired silently with `request`: the answer of an identical request in flight,
    /// else one of its own on a session.
    func token(_ request: AcquireTokenSilentRequest) -> Result<LocalTokenServer.Token, TokenFailure> {
        let key = request.params.jsonText
        let (flight, leads) = flights.withLock { flights in
            if let running = flights[key] {
                running.followers += 1
                return (running, false)
            }
            let flight = Flight()
            flights[key] = flight
            return (flight, true)
        }
        guard leads else {
            flight.done.wait()
            return flight.outcome ?? .failure(TokenFailure(kind: .unavailable, message: "the request it joined left no answer"))
        }
        let outcome = acquire(request)
        let followers = flights.withLock { flights in
            flights[key] = nil
            flight.outcome = outcome
            return flight.followers
        }
        for _ in 0..<followers { flight.done.signal() }
        return outcome
    }

    /// `request`'s token on a session of its own.
    private func acquire(_ request: AcquireTokenSilentRequest) -> Result<LocalTokenServer.Token, TokenFailure> {
        permits.wait()
        defer { permits.signal() }
        let unavailable = TokenFailure(kind: .unavailable, message: "the endpoint is shutting down")
        let taken: VerbSessionBox?? = idle.withLock { idle in
            guard idle != nil else { return nil }
            return .some(idle?.popLast())
        }
        guard let taken else { return .failure(unavailable) }
        let box: VerbSessionBox
        if let taken {
            box = taken
        } else {
            do throws(VerbFailure) { box = VerbSessionBox(try template.session.sibling()) } catch {
                return .failure(TokenFailure(kind: .unavailable, message: error.message))
            }
        }
        let outcome: Result<TokenResponse, RPCError>
        do throws(VerbFailure) { outcome = try send(request, on: box) } catch {
            return .failure(TokenFailure(kind: .unavailable, message: error.message))
        }
        let kept = idle.withLock { idle in
            guard idle != nil else { return false }
            idle?.append(box)
            return true
        }
        if !kept, box !== template { box.session.close() }
        switch outcome {
        case .success(let result):
            return .success(.init(token: result.accessToken, expiresOn: result.expiresOn, tokenType: result.tokenType))
        case .failure(let error):
            return .failure(
                TokenFailure(kind: VerbFailure.isSignInNeeded(error) ? .signInNeeded : .failed, message: VerbFailure.from(error).message))
        }
    }

    /// Sends a request on `box`'s session; when the connection turns out lost, reconnects it
    /// and sends the request once more.
    private func send(_ request: AcquireTokenSilentRequest, on box: VerbSessionBox) throws(VerbFailure) -> Result<TokenResponse, RPCError> {
        let current = box.session
        do {
            return try current.outcome(request)
        } catch {
            current.logger.warning("engine connection lost; reconnecting", metadata: ["reason": "\(error.message)"])
            let fresh = try current.reconnected()
            box.session = fresh
            current.logger.notice("engine connection reopened", metadata: ["engine": "\(fresh.connection.engine)"])
            return try fresh.outcome(request)
        }
    }
}

/// One request in flight and the identical ones waiting for it. Its fields are written under
/// the pool's `flights` lock before `done` is signalled (hence `@unchecked Sendable`).
private final class Flight: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var followers = 0
    var outcome: Result<LocalTokenServer.Token, EnginePool.TokenFailure>?
}

/// A session that one thread at a time uses (the one that took it from the pool); the box
/// lets a reconnected session replace it in place.
private final class VerbSessionBox: @unchecked Sendable {
    var session: VerbSession
    init(_ session: VerbSession) { self.session = session }
}
