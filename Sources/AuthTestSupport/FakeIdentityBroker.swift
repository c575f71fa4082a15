import AuthSeams
import POSIXSupport

/// An ``IdentityBroker`` answering from a script, recording every call (method, correlation
/// id, request text, time limit); `unavailable`: every call fails so (no broker there).
public final class FakeIdentityBroker: IdentityBroker {
    public typealias Responder = @Sendable (BrokerMethod, String) throws(BrokerCallError) -> String
    /// One call as the broker received it.
    public struct Call: Sendable {
        public let method: BrokerMethod
        public let correlationId: String
        public let request: String
        public let timeout: Duration?
    }

    private let responder: Responder
    private let recorded = PthreadMutex<[Call]>([])
    private let availability: BrokerCallError?

    /// - Parameter unavailable: what every call throws (`nil`: the broker is there).
    public init(unavailable: BrokerCallError? = nil, _ responder: @escaping Responder) {
        availability = unavailable
        self.responder = responder
    }

    public var calls: [Call] { recorded.withLock { $0 } }

    public func callNow(_ call: BrokerCall, timeout: Duration) -> Result<String, BrokerCallError>? {
        recorded.withLock { $0.append(Call(method: call.method, correlationId: call.correlationId, request: call.request, timeout: timeout)) }
        if let availability { return .failure(availability) }
        do throws(BrokerCallError) {
            return .success(try responder(call.method, call.request))
        } catch {
            return .failure(error)
        }
    }

    public func call(_ method: BrokerMethod, correlationId: String, request: String, timeout: Duration?) async throws(BrokerCallError)
        -> String
    {
        recorded.withLock { $0.append(Call(method: method, correlationId: correlationId, request: request, timeout: timeout)) }
        if let availability { throw availability }
        return try responder(method, request)
    }
}
