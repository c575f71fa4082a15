import AuthSeams
import POSIXSupport

/// A program that prints the assertion (`clientAssertion: {"command": [argv]}`), run at each
/// exchange as a key command is (``POSIX/commandOutput(_:timeLimit:maxOutput:)``: no shell,
/// its own process group, killed with it at the time limit, must exit 0), on a thread of its
/// own (``POSIX/offPool(timeLimit:_:)``): a slow command holds none of the cooperative pool.
public struct CommandAssertionSource: ClientAssertionSource {
    public let arguments: [String]
    public let timeLimit: Duration
    static let maxOutput = 64 * 1024

    public init(arguments: [String], timeLimit: Duration = .seconds(10)) {
        self.arguments = arguments
        self.timeLimit = timeLimit
    }

    public var name: String { "command \(arguments.first ?? "")" }

    public func assertion(transport: any HTTPTransport) async throws -> ClientAssertion {
        let (arguments, timeLimit) = (arguments, timeLimit)
        let ran = await POSIX.offPool { POSIX.commandOutput(arguments, timeLimit: timeLimit, maxOutput: Self.maxOutput) }
        switch ran {
        case .success(let output)?: return try assertion(fromText: String(decoding: output, as: UTF8.self))
        case .failure(let failure)?: throw self.failure(failure.reason)
        case nil: throw self.failure("cannot start a thread to run it")
        }
    }
}
