import AuthSeams
import POSIXSupport

/// A program that prints the assertion (`clientAssertion: {"command": [argv]}`), run at each
/// exchange as a key command is (``POSIX/commandOutput(_:timeLimit:maxOutput:)``: no shell,
/// time-limited, must exit 0).
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
        switch POSIX.commandOutput(arguments, timeLimit: timeLimit, maxOutput: Self.maxOutput) {
        case .success(let output): return try assertion(fromText: String(decoding: output, as: UTF8.self))
        case .failure(let failure): throw self.failure(failure.reason)
        }
    }
}
