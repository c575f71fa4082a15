/// The command lines beyond a token: `version`, `account list`, `account set` and the one
/// `login` line answered (azure-identity's claims-challenge advice), parsed as Azure CLI 2.91
/// reads them.
extension AzCommandLine {
    /// `login --claims-challenge B64 [--tenant T] [--scope S]`.
    public struct LoginWithClaims: Equatable, Sendable {
        public var claimsChallenge: String
        public var tenant: String?
        public var scopes: [String] = []
    }

    static func parseVersion(_ arguments: ArraySlice<String>) -> Result<Parsed, Failure> {
        var output = AzOutputOptions()
        switch readOptions(arguments, output: &output, { _, _ in false }) {
        case .failure(let failure): return .failure(failure)
        case .success(true): return .success(.help(versionHelp))
        case .success(false): return .success(.version(output))
        }
    }

    static func parseAccountList(_ arguments: ArraySlice<String>) -> Result<Parsed, Failure> {
        var output = AzOutputOptions()
        var all = false
        var refresh = false
        let result = readOptions(arguments, output: &output) { (name, cursor) throws(Failure) -> Bool in
            switch name {
            case "--all": all = true
            case "--refresh": refresh = true
            default: return false
            }
            guard !cursor.hasInlineValue else { throw Failure("unrecognized arguments: \(name)=...") }
            return true
        }
        switch result {
        case .failure(let failure): return .failure(failure)
        case .success(true): return .success(.help(accountListHelp))
        case .success(false): return .success(.accountList(all: all, refresh: refresh, output))
        }
    }

    static func parseAccountSet(_ arguments: ArraySlice<String>) -> Result<Parsed, Failure> {
        var output = AzOutputOptions()
        var subscription: String?
        let result = readOptions(arguments, output: &output) { (name, cursor) throws(Failure) -> Bool in
            guard ["--subscription", "-s", "--name", "-n"].contains(name) else { return false }
            subscription = try cursor.value()
            return true
        }
        switch result {
        case .failure(let failure): return .failure(failure)
        case .success(true): return .success(.help(accountSetHelp))
        case .success(false):
            guard let subscription else { return .failure(Failure("the following arguments are required: --name/--subscription/-n/-s")) }
            return .success(.accountSet(subscription: subscription))
        }
    }

    /// `login` with `--claims-challenge`; any other `login` line is ``Parsed/other(_:)``.
    static func parseLogin(_ arguments: ArraySlice<String>) -> Result<Parsed, Failure> {
        var output = AzOutputOptions()
        var claims: String?
        var tenant: String?
        var scopes: [String] = []
        var other = false
        let result = readOptions(arguments, output: &output) { (name, cursor) throws(Failure) -> Bool in
            switch name {
            case "--claims-challenge": claims = try cursor.value()
            case "--tenant", "-t": tenant = try cursor.value()
            case "--scope": scopes += try cursor.words()
            default:
                other = true
                _ = try? cursor.value()  // another login form: refused as a whole below
            }
            return true
        }
        guard case .success(let help) = result, !help, !other, let claims else { return .success(.other(["login"])) }
        return .success(.loginWithClaims(LoginWithClaims(claimsChallenge: claims, tenant: tenant, scopes: scopes)))
    }

    static let versionHelp = """
        Command
            az version : Show the versions of Azure CLI modules and extensions in JSON format by default
                or format configured by --output.
                (answered by auth-sidecar: the Azure CLI version whose output it reproduces, and its own
                as servedBy)

        Global Arguments
            --output -o         : Output format.  Allowed values: json, jsonc, none, table, tsv.

        """

    static let accountListHelp = """
        Command
            az account list : Get a list of subscriptions for the logged in account.
                (answered by auth-sidecar from the subscriptions kept for the signed-in user)

        Arguments
            --all               : List all subscriptions from all clouds, rather than just 'Enabled' ones.
            --refresh           : Retrieve up-to-date subscriptions from server.

        Global Arguments
            --output -o         : Output format.  Allowed values: json, jsonc, none, table, tsv.
            --query             : A field path (id, name) or a list of them.

        """

    static let accountSetHelp = """
        Command
            az account set : Set a subscription to be the current active subscription.
                (answered by auth-sidecar for the signed-in user's subscriptions)

        Arguments
            --name --subscription -n -s [Required] : Name or ID of subscription.

        """
}
