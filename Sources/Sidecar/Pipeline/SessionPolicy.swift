import JSON
import JSONRPC

/// A door's rules (who is asking, through which socket), as a stage of ``RequestPipeline``
/// that every request and every reply of a session passes, whatever the method and however
/// the engine runs it. A policy denies what it does not name: a method or a parameter it has
/// no rule for is refused before the engine sees the request.
///
/// The stages, in order: ``admit(_:params:)`` (the request as the engine will read it, or a
/// refusal), ``approve(_:params:)`` (a question to the user, for what needs consent), the
/// engine (on the ``channel(_:_:)`` this policy gives it), ``release(_:params:result:)``
/// (what may leave), ``audit(_:params:result:)`` (a record of what left).
///
/// The contract every policy keeps (`SessionPolicyConformanceTests` runs each against it):
/// - ``release(_:params:result:)`` is a pure function of `(method, params, result)`: the same
///   three give the same decision, whatever was asked before and whenever it is asked (no
///   clock, no counter, no state of the session). ``ReleasedReplyMemo`` relies on it: it reuses
///   the released text for the same admitted params and the same engine answer. A rule that
///   needs more (a time, a budget) belongs in ``admit(_:params:)`` or ``approve(_:params:)``.
/// - ``admit(_:params:)`` may be called more than once for one request (the fast path, then
///   the task when the fast path had no answer).
/// - ``approve(_:params:)`` refuses only a method for which ``asksConsent(_:)`` is true; for
///   the others it returns at once (an `.immediate` route does not call it).
/// - A policy that does not see replies (``seesReplies`` false) releases every result as it is.
/// - ``audit(_:params:result:)`` records; it changes nothing that leaves.
public protocol SessionPolicy: Sendable {
    /// Whether ``release(_:params:result:)`` and ``audit(_:params:result:)`` must see every
    /// reply as a value. A policy that changes or checks replies says `true`: the engine's fast
    /// path (a silent token from memory) then hands its answer to those stages as a value and
    /// sends what they release, serialized anew; a policy that says `false` passes every reply
    /// as it is, and the fast path sends the engine's kept text.
    var seesReplies: Bool { get }

    /// Whether ``approve(_:params:)`` may ask the user before `method` runs: the fast path,
    /// which answers on the reader thread and cannot wait for anyone, is then not taken.
    func asksConsent(_ method: SidecarMethod) -> Bool

    /// The request stage: `params` as the engine is to read them, or a refusal.
    func admit(_ method: SidecarMethod, params: JSONValue?) throws(RPCError) -> JSONValue?

    /// The consent stage, after ``admit(_:params:)``, for a request the user must approve
    /// first (a sign-in from another machine); throws the refusal.
    func approve(_ method: SidecarMethod, params: JSONValue?) async throws(RPCError)

    /// The peer channel the engine speaks to while it runs the request (notifications such as
    /// `deviceCode`, server requests such as `openUrl`).
    func channel(_ method: SidecarMethod, _ context: RequestContext) -> RequestContext

    /// The reply stage: what leaves, or a refusal, or the engine asked once more with other
    /// params (``ReplyDecision/askAgain(_:)``, a fresh token for exactly what is allowed).
    func release(_ method: SidecarMethod, params: JSONValue?, result: JSONValue) throws(RPCError) -> ReplyDecision

    /// The audit stage: `result` has left (after ``release(_:params:result:)``).
    func audit(_ method: SidecarMethod, params: JSONValue?, result: JSONValue)

    /// Whether errors leave through ``releaseError(_:_:)``, a stage after every other stage
    /// (``RequestPipeline``'s route, whatever its kind); otherwise an error leaves as the
    /// engine threw it. A plain property, not a cast to a protocol: a fresh process's first
    /// dynamic cast to a protocol scans every conformance record of the binary.
    var releasesErrors: Bool { get }

    /// The error that leaves for `error`, thrown while `method` was served (when
    /// ``releasesErrors``). The forward socket's names no laptop file (``ForwardDisclosure``).
    func releaseError(_ method: SidecarMethod, _ error: RPCError) -> RPCError
}

/// What the reply stage decides.
public enum ReplyDecision: Sendable {
    /// This result leaves.
    case send(JSONValue)
    /// Run the engine again with these params (once: a second ask is refused); only for
    /// requests that run as tasks.
    case askAgain(JSONValue?)
}

/// The policy of a door that serves the user's own processes (stdio, the agent's main socket
/// from a local process): everything the engine offers, replies as they are.
public struct OpenSessionPolicy: SessionPolicy {
    public init() {}
    public var seesReplies: Bool { false }
    public func asksConsent(_ method: SidecarMethod) -> Bool { false }
    public func admit(_ method: SidecarMethod, params: JSONValue?) throws(RPCError) -> JSONValue? { params }
    public func approve(_ method: SidecarMethod, params: JSONValue?) async throws(RPCError) {}
    public func channel(_ method: SidecarMethod, _ context: RequestContext) -> RequestContext { context }
    public func release(_ method: SidecarMethod, params: JSONValue?, result: JSONValue) throws(RPCError) -> ReplyDecision { .send(result) }
    public func audit(_ method: SidecarMethod, params: JSONValue?, result: JSONValue) {}
    public var releasesErrors: Bool { false }
    public func releaseError(_ method: SidecarMethod, _ error: RPCError) -> RPCError { error }
}
