/// Why the agent cannot start; the message names the path and the fix.
public struct AgentError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
    init(_ message: String) { self.message = message }
}
