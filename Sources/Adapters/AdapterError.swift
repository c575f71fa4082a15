/// Why an adapter cannot start.
public struct AdapterError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
