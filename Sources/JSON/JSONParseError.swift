/// Why text could not be parsed as JSON.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, as jansson or the depth check reported it.
    public let message: String
    /// Byte offset at which the problem was found (when known).
    public let position: Int

    public var description: String { "\(message) (at byte \(position))" }
}
