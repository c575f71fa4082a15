import JSON
import JSONRPC

/// The one way a request goes through a session, whatever the door: framing and parsing (the
/// server), then here, in this order and for every route kind:
///
/// 1. the session policy's request stage (``SessionPolicy/admit(_:params:)``): refused here,
///    the engine never sees the request;
/// 2. the cached-reply fast path (a silent token serialized from memory), only for a policy
///    that does not see replies (``SessionPolicy/seesReplies``);
/// 3. the policy's consent stage, then the engine, on the policy's peer channel;
/// 4. the reply stage (``SessionPolicy/release(_:params:result:)``);
/// 5. the audit stage.
///
/// The switch over ``RPCRoute`` is exhaustive, so a new route kind does not compile until it
/// passes the stages. An engine failure (-32002 before `initialize`) is answered as it is: it
/// carries nothing the engine holds.
struct RequestPipeline: Sendable {
    let policy: any SessionPolicy

    /// `engine`, the engine's route for `method`, with the policy's stages around it.
    func route(_ method: SidecarMethod, engine: RPCRoute) -> RPCRoute {
        switch engine {
        case .failure:
            return engine  // an error leaves, nothing the engine holds
        case .immediate(let run):
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
            guard !policy.seesReplies else { return .concurrent(staged(method, run)) }
            return .quickOrConcurrent(
                quick: { [policy] params, moment in
                    guard let admitted = try? policy.admit(method, params: params) else { return nil }
                    return quick(admitted, moment)
                },
                concurrent: staged(method, run))
        }
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
