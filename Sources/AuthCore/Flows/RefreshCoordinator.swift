/// Runs at most one refresh per key at a time; callers with the same key wait for it and
/// share its outcome (no refresh storms).
actor RefreshCoordinator {
    private var running: [String: Task<TokenResult, any Error>] = [:]

    func run(key: String, _ operation: @escaping @Sendable () async throws -> TokenResult) async throws -> TokenResult {
        if let existing = running[key] { return try await existing.value }
        let task = Task { try await operation() }
        running[key] = task
        defer { running[key] = nil }
        return try await task.value
    }
}
