import JSON

/// Gathers the replies of one batch and sends them as one array when the last arrives.
final class BatchCollector: @unchecked Sendable {
    private let lock = ConditionLock()
    private var replies: [JSONValue] = []
    private var outstanding: Int
    private let deliver: @Sendable ([JSONValue]) -> Void

    init(expected: Int, deliver: @escaping @Sendable ([JSONValue]) -> Void) {
        outstanding = expected
        self.deliver = deliver
    }

    /// Adds a reply (`nil` for a member that needs none: a notification).
    func add(_ reply: JSONValue?) {
        let complete: [JSONValue]? = lock.withLock {
            if let reply { replies.append(reply) }
            outstanding -= 1
            return outstanding == 0 ? replies : nil
        }
        if let complete { deliver(complete) }
    }
}
