/// A fast path for plain `auth-sidecar token ...` lines, the verb shells call most.
///
/// swift-argument-parser finds options by reflection, which makes the Swift runtime scan
/// every protocol conformance in the binary: about 3 ms of a token from a running agent.
/// Like ``LaunchOptions/quickParse(_:)``, this declines anything it does not fully
/// understand (help, an unknown, repeated or valueless option, a value starting with `-`,
/// invalid combinations), which then goes to ``TokenCommand`` for its messages; a test
/// checks that both read every line alike.
enum TokenCommandLine {
    /// The request and the verb's options of `arguments` (after `token`), or `nil`.
    static func parse(_ arguments: ArraySlice<String>) -> (TokenRequest, VerbLaunchOptions)? {
        var request = TokenRequest()
        var verb = VerbLaunchOptions()
        var seen = Set<String>()
        var remaining = arguments
        while let argument = remaining.popFirst() {
            let (name, inlineValue) = LaunchOptions.split(argument)
            guard name == "--scope" || seen.insert(name).inserted else { return nil }
            if let flag = flagSetter(name) {
                guard inlineValue == nil else { return nil }
                flag(&request, &verb)
                continue
            }
            guard let value = inlineValue ?? remaining.popFirst(), !value.hasPrefix("-"),
                set(name, value, &request, &verb)
            else { return nil }
        }
        return request.invalidity == nil ? (request, verb) : nil
    }

    private static func flagSetter(_ name: String) -> ((inout TokenRequest, inout VerbLaunchOptions) -> Void)? {
        switch name {
        case "--force-refresh": { request, _ in request.forceRefresh = true }
        case "--no-agent": { _, verb in verb.noAgent = true }
        default: nil
        }
    }

    private static func set(_ name: String, _ value: String, _ request: inout TokenRequest, _ verb: inout VerbLaunchOptions) -> Bool {
        switch name {
        case "--scope": request.scopes.append(value)
        case "--resource": request.resource = value
        case "--account": request.account = value
        case "--tenant": request.tenant = value
        case "--output":
            guard let output = TokenRequest.Output(rawValue: value) else { return false }
            request.output = output
        default:
            return verb.launch.setConfigurationOption(name, value) == true
        }
        return true
    }
}
