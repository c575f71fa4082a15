import JSON
import JSONRPC

/// The one way a request goes through a session, whatever the door: framing and parsing (the
/// server), then here, in this order and for every route kind:
///
/// 1. the session policy's request stage (``SessionPolicy/admit(_:params:)``): refused here,
///    the engine never sees the request;
/// 2. the cached-reply fast path (a silent token from memory, on the reader thread), never for
///    a method the policy may ask the user about (``SessionPolicy/asksConsent(_:)``);
/// 3. the policy's consent stage, then the engine, on the policy's peer channel;
/// 4. the reply stage (``SessionPolicy/release(_:params:result:)``), the fast path's answer
///    too, as a value, for a policy that sees replies (``SessionPolicy/seesReplies``);
/// 5. the audit stage.
///
/// The switch over ``RPCRoute`` is exhaustive, so a new route kind does not compile until it
/// passes the stages; an `.immediate` route of a method the policy may ask the user about runs
/// as a task, so it passes the consent stage too. An engine failure (-32002 before `initialize`) is answered as it is: it
/// carries nothing the engine holds.
struct RequestPipeline: Sendable {
    let policy: any SessionPolicy
    /// The session's last released fast-path reply (for a policy that sees replies).
    let memo: ReleasedReplyMemo

    /// `engine`, the engine's route for `method`, with the policy's stages around it.
    func route(_ method: SidecarMethod, engine: RPCRoute) -> RPCRoute {
        switch engine {
        case .failure:
            return engine  // an error leaves, nothing the engine holds
        case .immediate(let run) where policy.asksConsent(method):
            // The consent stage waits for the user: not on the reader thread.
            return .concurrent(staged(method) { params, _ in try run(params) })
        case .immediate(let run):
            // No consent to ask (``SessionPolicy/asksConsent(_:)`` is false, so `approve` has
            // nothing to decide) and no peer to speak to: admit, run, release, audit.
            return .immediate { [policy] params in
                let admitted = try policy.admit(method, params: params)
                guard case .send(let result) = try policy.release(method, params: admitted, result: try run(admitted)) else {
                    throw RPCError.internalError("\(method.rawValue) cannot be asked again")
                }
                policy.audit(method, params: admitted, result: result)
                return result
            }
        case .concurrent(let run):
            return .concurrent(staged(method, run))
        case .quickOrConcurrent(let quick, let run):
            guard !policy.asksConsent(method) else { return .concurrent(staged(method, run)) }
            return .quickOrConcurrent(
                quick: { [self] params, moment in
                    guard let admitted = try? policy.admit(method, params: params), let found = quick(admitted, moment) else { return nil }
                    return policy.seesReplies ? released(method, admitted, found) : found
                },
                concurrent: staged(method, run))
        }
    }

    /// The reply and audit stages for a fast-path answer, on the value; anything but "this
    /// leaves" (a refusal, a fresh token to ask for) is decided again by the task. The stage's
    /// answer for the same params and the same engine text is reused (``ReleasedReplyMemo``).
    private func released(_ method: SidecarMethod, _ admitted: JSONValue?, _ found: QuickResult) -> QuickResult? {
        let engineText = found.serialized
        if let template = engineText.template, let (text, value) = memo.reuse(template, params: admitted) {
            policy.audit(method, params: admitted, result: value)
            return QuickResult(serialized: { text }, value: { value })
        }
        guard case .send(let released)? = try? policy.release(method, params: admitted, result: found.value) else { return nil }
        policy.audit(method, params: admitted, result: released)
        let text = released.serialized()
        if let template = engineText.template { memo.keep(template, params: admitted, released: released, text: text) }
        return QuickResult(serialized: { SerializedResult(pieces: [text]) }, value: { released })
    }

    private func staged(
        _ method: SidecarMethod, _ run: @escaping @Sendable (JSONValue?, RequestContext) async throws -> JSONValue
    ) -> @Sendable (JSONValue?, RequestContext) async throws -> JSONValue {
        { [policy] params, context in
            var admitted = try policy.admit(method, params: params)
            try await policy.approve(method, params: admitted)
            let channel = policy.channel(method, context)
            var result = try await run(admitted, channel)
            var askedAgain = false
            while true {
                switch try policy.release(method, params: admitted, result: result) {
                case .send(let released):
                    policy.audit(method, params: admitted, result: released)
                    return released
                case .askAgain(let params) where !askedAgain:
                    askedAgain = true
                    admitted = params
                    result = try await run(admitted, channel)
                case .askAgain:
                    throw RPCError.internalError("\(method.rawValue): the reply stage refused the engine's second answer too")
                }
            }
        }
    }
}
