/// The Azure CLI command lines the `az` shim answers, parsed as Azure CLI 2.60+ reads them
/// (azure-cli's `profile` module and knack's global options): `account get-access-token` and
/// `account show` here, `version`, `account list`, `account set` and `login --claims-challenge`
/// in `AzCommandLine+Accounts.swift`. Small and strict: anything else is ``Parsed/other(_:)`` (refused, or handed
/// to a real Azure CLI), and a bad option is a ``Failure`` with az's exit status 2.
///
/// Options: `--name value`, `--name=value`, `-o value`, `-o=value` and `-ovalue`, anywhere
/// after the command's words. `--scope` takes the words that follow it up to the next option
/// (az's `nargs='*'`) and may be repeated. `--claims-challenge` (base64, as azure-identity
/// words it) is this shim's own: the token is acquired for those claims.
public enum AzCommandLine {
    /// What a line asks for.
    public enum Parsed: Equatable, Sendable {
        case getAccessToken(GetAccessToken, AzOutputOptions)
        case accountShow(subscription: String?, AzOutputOptions)
        /// `version`.
        case version(AzOutputOptions)
        /// `account list`: `--all`, `--refresh`.
        case accountList(all: Bool, refresh: Bool, AzOutputOptions)
        /// `account set --subscription ID|NAME`.
        case accountSet(subscription: String)
        /// `login --claims-challenge B64 [--tenant T] [--scope S]`, the line azure-identity prints.
        case loginWithClaims(LoginWithClaims)
        /// `-h`/`--help` of an answered command: the text to print.
        case help(String)
        /// A command this shim does not answer: its words, for the refusal.
        case other([String])
    }

    /// `account get-access-token`'s own options.
    public struct GetAccessToken: Equatable, Sendable {
        public var resource: String?
        public var resourceType: AzCloud.ResourceType?
        public var scopes: [String] = []
        public var tenant: String?
        public var subscription: String?
        public var claimsChallenge: String?

        public init() {}
    }

    /// A line az would refuse with a usage error: the message (after `ERROR: `), exit 2.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The exit status of a usage error, as az's (argparse's).
    public static let usageStatus: Int32 = 2

    /// Parses the arguments after `az`.
    public static func parse(_ arguments: [String]) -> Result<Parsed, Failure> {
        let words = Array(arguments.prefix { !$0.hasPrefix("-") })
        let options = arguments.dropFirst(words.count)
        switch words {
        case ["account", "get-access-token"]: return parseGetAccessToken(options)
        case ["account", "show"]: return parseAccountShow(options)
        case ["version"]: return parseVersion(options)
        case ["account", "list"]: return parseAccountList(options)
        case ["account", "set"]: return parseAccountSet(options)
        case ["login"]: return parseLogin(options)
        default: return .success(.other(words.isEmpty ? arguments : words))
        }
    }

    private static func parseGetAccessToken(_ arguments: ArraySlice<String>) -> Result<Parsed, Failure> {
        var request = GetAccessToken()
        var output = AzOutputOptions()
        let result = readOptions(arguments, output: &output) { (name, cursor) throws(Failure) -> Bool in
            switch name {
            case "--resource": request.resource = try cursor.value()
            case "--resource-type":
                let text = try cursor.value()
                guard let type = AzCloud.ResourceType(rawValue: text) else {
                    let choices = AzCloud.ResourceType.allCases.map(\.rawValue).joined(separator: ", ")
                    throw Failure(
                        "az account get-access-token: '\(text)' is not a valid value for '--resource-type'. Allowed values: \(choices).")
                }
                request.resourceType = type
            case "--scope":
                request.scopes += try cursor.words()
            case "--tenant", "-t": request.tenant = try cursor.value()
            case "--subscription", "-s", "--name", "-n": request.subscription = try cursor.value()
            case "--claims-challenge": request.claimsChallenge = try cursor.value()
            default: return false
            }
            return true
        }
        if case .failure(let failure) = result { return .failure(failure) }
        if case .success(true) = result { return .success(.help(getAccessTokenHelp)) }
        return .success(.getAccessToken(request, output))
    }

    private static func parseAccountShow(_ arguments: ArraySlice<String>) -> Result<Parsed, Failure> {
        var subscription: String?
        var output = AzOutputOptions()
        let result = readOptions(arguments, output: &output) { (name, cursor) throws(Failure) -> Bool in
            guard ["--subscription", "-s", "--name", "-n"].contains(name) else { return false }
            subscription = try cursor.value()
            return true
        }
        if case .failure(let failure) = result { return .failure(failure) }
        if case .success(true) = result { return .success(.help(accountShowHelp)) }
        return .success(.accountShow(subscription: subscription, output))
    }

    /// The option loop: the command's own options through `set` (false: not one of them),
    /// then the global ones. Returns true when help was asked for.
    static func readOptions(
        _ arguments: ArraySlice<String>, output: inout AzOutputOptions,
        _ set: (_ name: String, _ cursor: Cursor) throws(Failure) -> Bool
    ) -> Result<Bool, Failure> {
        let cursor = Cursor(arguments)
        var help = false
        do throws(Failure) {
            while let (name, argument) = cursor.next() {
                guard name.hasPrefix("-"), !name.isEmpty else { throw Failure("unrecognized arguments: \(argument)") }
                if try set(name, cursor) { continue }
                switch name {
                case "--output", "-o":
                    let text = try cursor.value()
                    guard let format = AzOutputOptions.Format(rawValue: text.lowercased()) else {
                        throw Failure(
                            "argument --output/-o: '\(text)' is not answered by this az (auth-sidecar's): use json, jsonc, tsv, table or none")
                    }
                    output.format = format
                case "--query":
                    let text = try cursor.value()
                    guard let query = AzQuery(text) else {
                        throw Failure(
                            "--query '\(text)' is not answered by this az (auth-sidecar's): use a field path (accessToken, user.name) "
                                + "or a list of them ([accessToken, expires_on]), or the real Azure CLI")
                    }
                    output.query = query
                case "--debug", "--verbose", "--only-show-errors", "--no-color":
                    guard !cursor.hasInlineValue else { throw Failure("unrecognized arguments: \(argument)") }
                case "-h", "--help": help = true
                default: throw Failure("unrecognized arguments: \(argument)")
                }
            }
        } catch {
            return .failure(error)
        }
        return .success(help)
    }

    /// The arguments still to read, and the value written into the current one (`--name=value`).
    final class Cursor {
        private var rest: ArraySlice<String>
        private var name = ""
        private var inline: String?

        init(_ arguments: ArraySlice<String>) { rest = arguments }

        var hasInlineValue: Bool { inline != nil }

        /// The next option's name, and the argument as written.
        func next() -> (name: String, argument: String)? {
            guard let argument = rest.popFirst() else { return nil }
            (name, inline) = split(argument)
            return (name, argument)
        }

        /// The current option's value: inline, else the next argument (not an option).
        func value() throws(Failure) -> String {
            if let inline { return inline }
            guard let next = rest.first, !next.hasPrefix("-") || next == "-" else {
                throw Failure("argument \(name): expected one argument")
            }
            rest.removeFirst()
            return next
        }

        /// The current option's values: inline, then the arguments up to the next option.
        func words() throws(Failure) -> [String] {
            var words = inline.map { [$0] } ?? []
            while let next = rest.first, !next.hasPrefix("-") {
                words.append(next)
                rest.removeFirst()
            }
            guard !words.isEmpty else { throw Failure("argument \(name): expected at least one argument") }
            return words
        }
    }

    /// `--name=value`, `-o=value` and `-ovalue` into name and value.
    static func split(_ argument: String) -> (name: String, value: String?) {
        if argument.hasPrefix("--") {
            guard let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
            return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
        }
        guard argument.hasPrefix("-"), argument.count > 2 else { return (argument, nil) }
        let name = String(argument.prefix(2))
        let value = argument.dropFirst(2)
        return (name, String(value.hasPrefix("=") ? value.dropFirst() : value))
    }

    static let getAccessTokenHelp = """
        Command
            az account get-access-token : Get a token for utilities to access Azure.
                (answered by auth-sidecar from the signed-in user's tokens)

        Arguments
            --resource          : Azure resource endpoints in Microsoft Entra v1.0.
            --resource-type     : Type of well-known resource.  Allowed values: aad-graph, arm, batch,
                                  data-lake, media, ms-graph, oss-rdbms.
            --scope             : Space-separated scopes in Microsoft Entra v2.0. Default to Azure
                                  Resource Manager.
            --tenant -t         : Tenant ID for which the token is acquired.
            --subscription -s   : Name or ID of a subscription (a tenant-level account: its tenant's ID).
            --claims-challenge  : Base64-encoded claims challenge (auth-sidecar's addition).

        Global Arguments
            --output -o         : Output format.  Allowed values: json, jsonc, none, table, tsv.
            --query             : A field path (accessToken, expires_on) or a list of them.

        """

    static let accountShowHelp = """
        Command
            az account show : Get the details of a subscription.
                (answered by auth-sidecar: the signed-in user's default subscription, or the user as
                a tenant-level account when it has none)

        Arguments
            --subscription -s   : Name or ID of a subscription (a tenant-level account: its tenant's ID).

        Global Arguments
            --output -o         : Output format.  Allowed values: json, jsonc, none, table, tsv.
            --query             : A field path (tenantId, user.name) or a list of them.

        """
}

/// `--output` and `--query`, the global options knack gives every command.
public struct AzOutputOptions: Equatable, Sendable {
    /// The formats answered (`jsonc` is `json` when stdout is not a terminal, as in az; it is
    /// never coloured here).
    public enum Format: String, Equatable, Sendable {
        case json, jsonc, tsv, table, none
    }

    public var format: Format = .json
    public var query: AzQuery?

    public init(format: Format = .json, query: AzQuery? = nil) {
        self.format = format
        self.query = query
    }
}
