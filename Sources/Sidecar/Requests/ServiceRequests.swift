import JSON
import JSONRPC

/// `ping`: the engine answers `{}` (no configuration needed).
public struct PingRequest: RequestType {
    public typealias Response = EmptyResponse
    public static let method = SidecarMethod.ping.rawValue
    public static let parameters: Set<String> = []

    public init() {}
    public init(_ params: Params) throws(RPCError) {}
    public var params: JSONValue { [:] }
}

/// `getDeviceInformation`: the device, the browser mode and (with one configured) the broker.
public struct GetDeviceInformationRequest: RequestType {
    public typealias Response = DeviceInformationResponse
    public static let method = SidecarMethod.getDeviceInformation.rawValue
    public static let parameters: Set<String> = []

    public init() {}
    public init(_ params: Params) throws(RPCError) {}
    public var params: JSONValue { [:] }
}

/// `getDeviceInformation`'s result, as the engine encoded it (``DeviceInformation/json``).
public struct DeviceInformationResponse: ResponseType {
    public let result: JSONValue
    public init(decoding result: JSONValue) throws(RPCError) { self.result = result }
}

/// `diagnostics/sleep` (with `--enable-diagnostics`, for engine tests): answers after `ms`.
public struct DiagnosticsSleepRequest: RequestType {
    public typealias Response = DiagnosticsSleepResponse
    public static let method = SidecarMethod.diagnosticsSleep.rawValue
    public static let parameters: Set<String> = ["ms"]

    /// 0 to 600,000 milliseconds.
    public var milliseconds: Int

    public init(milliseconds: Int) { self.milliseconds = milliseconds }

    public init(_ params: Params) throws(RPCError) {
        milliseconds = try params.required("ms")
        guard (0...600_000).contains(milliseconds) else { throw .invalidParams("'ms' must be between 0 and 600000", member: "ms") }
    }

    public var params: JSONValue { ["ms": .int(Int64(milliseconds))] }
}

/// `diagnostics/sleep`'s result: how long it slept.
public struct DiagnosticsSleepResponse: ResponseType {
    public var sleptMs: Int64

    public init(sleptMs: Int64) { self.sleptMs = sleptMs }

    public init(decoding result: JSONValue) throws(RPCError) {
        guard let slept = result["sleptMs"]?.intValue else { throw .malformedResult(DiagnosticsSleepRequest.method, member: "sleptMs") }
        sleptMs = slept
    }

    public var result: JSONValue { ["sleptMs": .int(sleptMs)] }
}
