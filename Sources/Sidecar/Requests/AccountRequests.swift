import AuthCore
import JSON
import JSONRPC

/// `getAccounts`: the accounts the cache holds, or those of one username.
public struct GetAccountsRequest: RequestType {
    public typealias Response = AccountsResponse
    public static let method = SidecarMethod.getAccounts.rawValue
    public static let parameters: Set<String> = ["username"]

    /// Only the accounts with this username (`nil`: all).
    public var username: String?

    public init(username: String? = nil) { self.username = username }

    public init(_ params: Params) throws(RPCError) {
        username = try params.optional("username")
    }

    public var params: JSONValue {
        var object = JSONObject()
        if let username { object["username"] = .string(username) }
        return .object(object)
    }
}

/// `getAccounts`' result: each account with its `tenants` and `isCurrent`.
public struct AccountsResponse: ResponseType {
    /// The accounts, each a protocol Account object (with `tenants` and `isCurrent`).
    public var accounts: [JSONValue]

    public init(accounts: [JSONValue]) { self.accounts = accounts }

    public init(decoding result: JSONValue) throws(RPCError) {
        guard let accounts = result["accounts"]?.arrayValue else { throw .malformedResult(GetAccountsRequest.method, member: "accounts") }
        self.accounts = accounts
    }

    public var result: JSONValue { ["accounts": .array(accounts)] }
}

/// `getCurrentAccount`: the account requests name when they name none.
public struct GetCurrentAccountRequest: RequestType {
    public typealias Response = CurrentAccountResponse
    public static let method = SidecarMethod.getCurrentAccount.rawValue
    public static let parameters: Set<String> = []

    public init() {}
    public init(_ params: Params) throws(RPCError) {}
    public var params: JSONValue { [:] }
}

/// `setCurrentAccount`: makes the named account the current one.
public struct SetCurrentAccountRequest: RequestType {
    public typealias Response = CurrentAccountResponse
    public static let method = SidecarMethod.setCurrentAccount.rawValue
    public static let parameters: Set<String> = ["account"]

    public var account: AccountReference

    public init(account: AccountReference) { self.account = account }

    public init(_ params: Params) throws(RPCError) {
        guard let account = try AuthJSON.accountReference(params) else {
            throw .invalidParams("missing member 'account'", member: "account")
        }
        self.account = account
    }

    public var params: JSONValue { ["account": AuthJSON.json(account)] }
}

/// `getCurrentAccount`'s and `setCurrentAccount`'s result: the current account and the one before.
public struct CurrentAccountResponse: ResponseType {
    /// An Account object, or `null`.
    public var account: JSONValue
    /// The account that was current before (`null`: none).
    public var previousAccount: JSONValue

    public init(account: JSONValue, previousAccount: JSONValue) {
        self.account = account
        self.previousAccount = previousAccount
    }

    public init(decoding result: JSONValue) throws(RPCError) {
        account = result["account"] ?? .null
        previousAccount = result["previousAccount"] ?? .null
    }

    public var result: JSONValue { ["account": account, "previousAccount": previousAccount] }
}

/// `signout`: forgets an account's tokens (the current account's when none is named).
public struct SignoutRequest: RequestType {
    public typealias Response = SignoutResponse
    public static let method = SidecarMethod.signout.rawValue
    public static let parameters: Set<String> = ["account", "signoutFromBrowser"]

    public var account: AccountReference?
    /// Also end the browser's session (the end-session page).
    public var signoutFromBrowser = false

    public init(account: AccountReference? = nil, signoutFromBrowser: Bool = false) {
        self.account = account
        self.signoutFromBrowser = signoutFromBrowser
    }

    public init(_ params: Params) throws(RPCError) {
        account = try AuthJSON.accountReference(params)
        signoutFromBrowser = try params.optional("signoutFromBrowser") ?? false
    }

    public var params: JSONValue {
        var object = JSONObject()
        if let account { object["account"] = AuthJSON.json(account) }
        if signoutFromBrowser { object["signoutFromBrowser"] = true }
        return .object(object)
    }
}

/// `signout`'s result.
public struct SignoutResponse: ResponseType {
    public var signedOut: Bool
    /// The account signed out (an Account object, or `null`).
    public var account: JSONValue
    /// What became of the browser's session, when asked to end it.
    public var browserSignOut: String?

    public init(signedOut: Bool, account: JSONValue, browserSignOut: String?) {
        self.signedOut = signedOut
        self.account = account
        self.browserSignOut = browserSignOut
    }

    public init(decoding result: JSONValue) throws(RPCError) {
        guard let signedOut = result["signedOut"]?.boolValue else { throw .malformedResult(SignoutRequest.method, member: "signedOut") }
        self.signedOut = signedOut
        account = result["account"] ?? .null
        browserSignOut = result["browserSignOut"]?.stringValue
    }

    public var result: JSONValue {
        var object: JSONObject = ["signedOut": .bool(signedOut), "account": account]
        if let browserSignOut { object["browserSignOut"] = .string(browserSignOut) }
        return .object(object)
    }
}
