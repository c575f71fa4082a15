import JSON
import JSONRPC

/// The error stage of a policy that ``SessionPolicy/releasesErrors``: wrapped around a route
/// after every other stage.
extension SessionPolicy {
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
