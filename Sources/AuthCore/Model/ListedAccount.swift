/// An account as a listing shows it (`getAccounts`): the account, the tenants the cache holds
/// its tokens for, and whether it is the current account.
public struct ListedAccount: Sendable, Equatable {
    public var account: Account
    /// The tenants (cache realms) of the account's access and ID tokens, its own tenant first;
    /// a sign-in through `common`, `organizations` or `consumers` counts as the ID token's `tid`.
    public var tenants: [String]
    /// Whether this is what ``PublicClientApplication/currentAccount()`` returns.
    public var isCurrent: Bool

    public init(account: Account, tenants: [String], isCurrent: Bool) {
        self.account = account
        self.tenants = tenants
        self.isCurrent = isCurrent
    }
}
