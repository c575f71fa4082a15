import Adapters
import JSON
import Sidecar

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `keyring` entry point: started as `keyring` (a link to this binary) or as
/// `auth-sidecar keyring ...`, it answers the `keyring` command line as pip and uv call it with
/// `--keyring-provider subprocess`: `keyring get SERVICE USERNAME` prints the password (pip, and
/// uv with a user name in the index URL), `keyring get SERVICE --mode creds` prints the user
/// name and the password on two lines (uv without one; `--output json` as keyring 25 prints
/// them). SERVICE is the index URL, a file's URL or the host[:port] alone; ``PackageFeeds``
/// says which get a token (Azure Artifacts, `packageFeeds`) and for which scope, acquired
/// silently. Anything else: nothing on stdout and exit 1, as the real keyring says "not found"
/// (so pip and uv go on to their next source); a sign-in needed says so on stderr, also exit 1.
/// `set` and `del` are refused (exit 2): these passwords come from a sign-in, not a store.
enum KeyringShim {
    /// What the line asks.
    struct Request: Equatable {
        var service: String
        var username: String?
        var creds = false
        var json = false
    }

    /// The usage error's exit status (argparse's).
    static let usageStatus: Int32 = 2
    /// "Not found" (the real keyring's `get` with no password).
    static let notFoundStatus: Int32 = 1

    /// Parses the line: the request, or the usage error's message.
    static func parse(_ arguments: [String]) -> Result<Request, KeyringUsage> {
        var words: [String] = []
        var creds = false
        var json = false
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            let (name, inline) = word.hasPrefix("--") ? splitOption(word) : (word, nil)
            switch name {
            case "--mode", "--output", "-b", "--keyring-backend", "-p", "--keyring-path":
                guard let value = inline ?? (index < arguments.count ? arguments[index] : nil) else {
                    return .failure(KeyringUsage("argument \(name): expected one argument"))
                }
                if inline == nil { index += 1 }
                switch name {
                case "--mode":
                    guard value == "password" || value == "creds" else {
                        return .failure(KeyringUsage("argument --mode: invalid choice: '\(value)' (choose from 'password', 'creds')"))
                    }
                    creds = value == "creds"
                case "--output":
                    guard value == "plain" || value == "json" else {
                        return .failure(KeyringUsage("argument --output: invalid choice: '\(value)' (choose from 'plain', 'json')"))
                    }
                    json = value == "json"
                default: break  // a backend or its path: this keyring has one backend, the sidecar
                }
            case "--disable", "--list-backends", "--print-completion":
                return .failure(KeyringUsage("\(name) is not answered by auth-sidecar's keyring"))
            default:
                guard !word.hasPrefix("-") else { return .failure(KeyringUsage("unrecognized arguments: \(word)")) }
                words.append(word)
            }
        }
        guard let operation = words.first else { return .failure(KeyringUsage("the following arguments are required: operation")) }
        guard operation == "get" else {
            return .failure(
                KeyringUsage(
                    "'keyring \(operation)' is not answered by auth-sidecar's keyring: its passwords are tokens of the signed-in account, nothing is stored"
                ))
        }
        guard words.count >= 2, words.count <= 3, creds || words.count == 3 else {
            return .failure(KeyringUsage("get needs SERVICE and USERNAME (or --mode creds and SERVICE)"))
        }
        return .success(Request(service: words[1], username: words.count == 3 ? words[2] : nil, creds: creds, json: json))
    }

    private static func splitOption(_ word: String) -> (String, String?) {
        guard let equals = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<equals]), String(word[word.index(after: equals)...]))
    }

    /// Answers the line; returns the exit status.
    static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("-h") || arguments.contains("--help") {
            Console.write(help, to: STDOUT_FILENO)
            return 0
        }
        let request: Request
        switch parse(arguments) {
        case .failure(let usage):
            Console.say("keyring: error: \(usage.message)")
            return usageStatus
        case .success(let parsed): request = parsed
        }
        let configured: [String: String]
        do {
            configured = try ConfigurationSources.load(LaunchOptions()).overrides.packageFeeds ?? [:]
        } catch {
            Console.say("keyring (auth-sidecar): \(error.message)")
            return notFoundStatus
        }
        if let problem = PackageFeeds.problem(configured) {
            Console.say("keyring (auth-sidecar): \(problem)")
            return notFoundStatus
        }
        guard let scope = PackageFeeds(configured).scope(forService: request.service) else { return notFoundStatus }
        let status = VerbSession.exitStatus(VerbLaunchOptions()) { session throws(VerbFailure) in
            let result = try session.call(AcquireTokenSilentRequest(scopes: [scope]), pipelined: true)
            let username =
                request.username ?? result.account["username"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "auth-sidecar"
            session.print(answer(request, username: username, token: result.accessToken))
        }
        return status == 0 ? 0 : notFoundStatus
    }

    /// What `get` prints: the password, or the user name and the password (`--mode creds`), as
    /// plain lines or keyring's JSON.
    static func answer(_ request: Request, username: String, token: String) -> String {
        switch (request.creds, request.json) {
        case (false, false): return token
        case (false, true): return JSONValue.object(["password": .string(token)]).jsonText
        case (true, false): return username + "\n" + token
        case (true, true): return JSONValue.object(["username": .string(username), "password": .string(token)]).jsonText
        }
    }

    static let help = """
        usage: keyring [-h] [--mode {password,creds}] [--output {plain,json}] get SERVICE [USERNAME]

        auth-sidecar's keyring for pip and uv (--keyring-provider subprocess): the password for an
        Azure Artifacts feed (https://pkgs.dev.azure.com/..., https://ORG.pkgs.visualstudio.com/...)
        or a feed configured in packageFeeds ({"URL prefix": "scope"}) is an access token of the
        signed-in account, acquired silently. Any other service: exit 1 (not found).

        """
}

/// A usage error of the `keyring` line.
struct KeyringUsage: Error, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
}
