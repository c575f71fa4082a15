import JSON

/// How insistently the sign-in page asks the user (MSAL's `MSALPromptType`).
public enum PromptType: String, Sendable, CaseIterable {
    case promptIfNecessary, selectAccount, login, consent, create

    /// The OAuth `prompt` value, none for `promptIfNecessary` (SSO decided by cookies).
    var oauthValue: String? {
        switch self {
        case .promptIfNecessary: nil
        case .selectAccount: "select_account"
        case .login: "login"
        case .consent: "consent"
        case .create: "create"
        }
    }
}

/// An interactive (browser) sign-in.
public struct InteractiveRequest: Sendable {
    public var scopes: [String]?
    public var prompt: PromptType = .promptIfNecessary
    public var loginHint: String?
    public var domainHint: String?
    public var account: AccountReference?
    /// Another authority for this request (e.g. a B2C edit-profile policy).
    public var authority: String?
    public var claims: String?
    public var extraScopesToConsent: [String] = []
    public var extraQueryParameters: [(String, String)] = []
    /// The kind of token asked for (a bearer token unless said).
    public var token = RequestedToken.bearer
    /// An SSH certificate for this key instead of a bearer token (`token_type=ssh-cert`).
    public var sshKey: SSHKeyBinding? { token.sshKey }
    /// The resource request a proof-of-possession token is for: the broker, which holds its own
    /// key, signs it (`popParams`); the flows sign with the cache's key afterwards.
    public var popTarget: PopRequestTarget?
    public init() {}
}

/// A device code sign-in; `onUserCode` shows the code to the user.
public struct DeviceCodeRequest: Sendable {
    public var scopes: [String]?
    public var authority: String?
    public var claims: String?
    public var onUserCode: @Sendable (DeviceCodeInfo) -> Void
    public init(onUserCode: @escaping @Sendable (DeviceCodeInfo) -> Void) { self.onUserCode = onUserCode }
}

/// A silent acquisition: the cache, else the refresh token; never UI.
public struct SilentRequest: Sendable {
    public var scopes: [String]?
    /// Default: the current account.
    public var account: AccountReference?
    public var authority: String?
    public var forceRefresh = false
    public var claims: String?
    /// The kind of token asked for (a bearer token unless said).
    public var token = RequestedToken.bearer
    /// An SSH certificate for this key instead of a bearer token (`token_type=ssh-cert`),
    /// cached under the key's id.
    public var sshKey: SSHKeyBinding? { token.sshKey }
    /// The resource request a proof-of-possession token is for (see ``InteractiveRequest/popTarget``).
    public var popTarget: PopRequestTarget?
    public init() {}
}
