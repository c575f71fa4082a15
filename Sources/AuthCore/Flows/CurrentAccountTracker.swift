import Synchronization

/// What `getCurrentAccount` last reported in this process, to tell a change.
final class CurrentAccountTracker: Sendable {
    private let last = Mutex<Account?>(nil)

    /// Records `current`; returns the previously known account when it differs.
    func update(_ current: Account?) -> Account? {
        last.withLock { last in
            defer { last = current }
            return last?.homeAccountId != current?.homeAccountId ? last : nil
        }
    }

    /// Notes the account a sign-in made current (without reporting a change).
    func note(_ account: Account) {
        last.withLock { $0 = account }
    }
}
