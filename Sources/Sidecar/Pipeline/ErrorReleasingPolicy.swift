import JSON
import JSONRPC

/// A session policy whose errors leave through a stage of their own, after every other stage
/// (``RequestPipeline``'s route, whatever its kind): otherwise an error leaves as the engine
/// threw it. The forward socket's names no laptop file (``ForwardDisclosure``).
public protocol ErrorReleasingPolicy: SessionPolicy {
    /// The error that leaves for `error`, thrown while `method` was served.
    func releaseError(_ method: SidecarMethod, _ error: RPCError) -> RPCError
}

extension ErrorReleasingPolicy {
    /// `route` with every error it answers passed through ``releaseError(_:_:)``.
    func releasingErrors(_ method: SidecarMethod, _ route: RPCRoute) -> RPCRoute {
        switch route {
        case .failure(let error): return .failure(releaseError(method, error))
        case .immediate(let run):
            return .immediate { params in
                do { return try run(params) } catch let error as RPCError { throw releaseError(method, error) }
            }
        case .concurrent(let run): return .concurrent(releasing(method, run))
        case .quickOrConcurrent(let quick, let run): return .quickOrConcurrent(quick: quick, concurrent: releasing(method, run))
        }
    }

    private func releasing(
        _ method: SidecarMethod, _ run: @escaping @Sendable (JSONValue?, RequestContext) async throws -> JSONValue
    ) -> @Sendable (JSONValue?, RequestContext) async throws -> JSONValue {
        { params, context in
            do { return try await run(params, context) } catch let error as RPCError { throw releaseError(method, error) }
        }
    }
}
