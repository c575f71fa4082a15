import Logging

/// The one special path beside swift-argument-parser: plain `--option value` lines of the
/// stdio mode (what editors start), of `token` (what shells call most) and of `ssh-cert` (what
/// `ssh`'s `Match exec` or a `ProxyCommand` runs per connection), read without reflection.
///
/// Why it exists (measured, ARCHITECTURE.md "Start-up cost"): swift-argument-parser finds a
/// command's options with `Mirror`, and each property's type is checked against its
/// protocols by the Swift runtime, which scans every conformance record in the binary (about
/// 4,700) on each first lookup. Parsing one command costs about 1.3 ms of a 3.4 ms stdio start
/// and 1.8 ms of a `token` run, whether the whole command tree or only the command named by
/// `argv[1]` is parsed (both were measured), so no reorganisation of the commands removes it.
///
/// It declines anything it does not fully understand (help, version, an unknown, repeated or
/// valueless option, a value starting with `-`, an invalid value or combination), which then
/// goes to swift-argument-parser for its messages; `PlainCommandLineTests` checks that both
/// read every plain line alike.
enum PlainCommandLine: Equatable {
    /// Options, then the JSON-RPC server on stdin/stdout.
    case stdio(LaunchOptions)
    /// `token ...`: the request and the verb's options.
    case token(TokenRequest, VerbLaunchOptions)
    /// `ssh-cert ...`: the request and the verb's options.
    case sshCert(SSHCertRequest, VerbLaunchOptions)

    /// The line `arguments` (without the program name), or nil for swift-argument-parser.
    static func parse(_ arguments: [String]) -> PlainCommandLine? {
        if arguments.first == TokenCommand.configuration.commandName {
            var request = TokenRequest()
            var verb = VerbLaunchOptions()
            let understood = readOptions(arguments.dropFirst(), repeatable: ["--scope"]) { setToken($0, $1, &request, &verb) }
            guard understood else { return nil }
            return request.invalidity == nil ? .token(request, verb) : nil
        }
        if arguments.first == SSHCertCommand.configuration.commandName {
            var request = SSHCertRequest()
            var verb = VerbLaunchOptions()
            let understood = readOptions(arguments.dropFirst(), repeatable: []) { setSSHCert($0, $1, &request, &verb) }
            return understood ? .sshCert(request, verb) : nil
        }
        var options = LaunchOptions()
        let understood = readOptions(arguments[...], repeatable: []) { setStdio($0, $1, &options) }
        return understood ? .stdio(options) : nil
    }

    /// What a setter makes of one option.
    private enum Outcome {
        case set
        /// A known option with an invalid value, or an unknown one: decline the line.
        case decline
    }

    /// The option loop both lines share: `--name value`, `--name=value` and flags (the setter
    /// gets a nil value; an option that needs one declines it).
    private static func readOptions(
        _ arguments: ArraySlice<String>, repeatable: Set<String>, _ set: (String, String?) -> Outcome
    ) -> Bool {
        var seen = Set<String>()
        var remaining = arguments
        while let argument = remaining.popFirst() {
            let (name, inlineValue) = LaunchOptions.split(argument)
            guard name.hasPrefix("--"), repeatable.contains(name) || seen.insert(name).inserted else { return false }
            if flags.contains(name) {
                guard inlineValue == nil, case .set = set(name, nil) else { return false }
                continue
            }
            guard let value = inlineValue ?? remaining.popFirst(), !value.hasPrefix("-"), case .set = set(name, value) else {
                return false
            }
        }
        return true
    }

    /// The options that take no value (in either line).
    private static let flags: Set<String> = ["--enable-diagnostics", "--force-refresh", "--no-agent"]

    private static func setStdio(_ name: String, _ value: String?, _ options: inout LaunchOptions) -> Outcome {
        switch (name, value) {
        case ("--enable-diagnostics", nil): options.enableDiagnostics = true
        case ("--max-message-size", let value?):
            guard let size = Int(value), size >= 64 else { return .decline }
            options.maxMessageSize = size
        case (_, let value?): return options.setConfigurationOption(name, value) == true ? .set : .decline
        default: return .decline
        }
        return .set
    }

    private static func setSSHCert(
        _ name: String, _ value: String?, _ request: inout SSHCertRequest, _ verb: inout VerbLaunchOptions
    ) -> Outcome {
        switch (name, value) {
        case ("--key", let value?): request.key = value
        case ("--output", let value?): request.output = value
        case ("--output-format", let value?):
            guard let format = SSHCertRequest.Format(rawValue: value) else { return .decline }
            request.format = format
        default: return setVerb(name, value, &verb)
        }
        return .set
    }

    /// What every verb line takes: `--no-agent` and the configuration options.
    private static func setVerb(_ name: String, _ value: String?, _ verb: inout VerbLaunchOptions) -> Outcome {
        switch (name, value) {
        case ("--no-agent", nil): verb.noAgent = true
        case (_, let value?): return verb.launch.setConfigurationOption(name, value) == true ? .set : .decline
        default: return .decline
        }
        return .set
    }

    private static func setToken(_ name: String, _ value: String?, _ request: inout TokenRequest, _ verb: inout VerbLaunchOptions) -> Outcome {
        switch (name, value) {
        case ("--force-refresh", nil): request.forceRefresh = true
        case ("--scope", let value?): request.scopes.append(value)
        case ("--resource", let value?): request.resource = value
        case ("--account", let value?): request.account = value
        case ("--tenant", let value?): request.tenant = value
        case ("--pop-method", let value?): request.popMethod = value
        case ("--pop-url", let value?): request.popURL = value
        case ("--pop-nonce", let value?): request.popNonce = value
        case ("--output", let value?):
            guard let output = TokenRequest.Output(rawValue: value) else { return .decline }
            request.output = output
        default: return setVerb(name, value, &verb)
        }
        return .set
    }
}
