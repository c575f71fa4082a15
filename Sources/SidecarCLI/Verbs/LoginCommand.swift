import ArgumentParser
import JSON
import Sidecar

/// `auth-sidecar login`: an interactive sign-in (system browser, or the device code flow).
struct LoginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in: in the system browser, or with --device-code on another device.",
        discussion: """
            Without a browser here (over SSH: no DISPLAY, WAYLAND_DISPLAY or BROWSER), prints the \
            sign-in URL on stderr with the 'ssh -L' line that forwards the loopback redirect, and waits. \
            Prints 'Signed in as USER' (or --output json: the account, scopes and expiry; no token). \
            --import instead copies, into an empty cache, the sign-ins Azure CLI \
            ($AZURE_CONFIG_DIR or ~/.azure/msal_token_cache.json) and azure-identity (its Secret Service \
            item) already made for this authority: accounts and the refresh tokens this client can use \
            (its own, or family tokens). Those stores are only read.
            """)

    @Flag(name: .customLong("device-code"), help: "Use the device code flow: sign in on another device with a code.")
    var deviceCode = false

    @Flag(name: .customLong("import"), help: "Import Azure CLI's and azure-identity's sign-ins into an empty cache (read only).")
    var importSignIns = false

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope to consent to (repeatable; default: the configured scopes).", valueName: "scope"))
    var scopes: [String] = []

    @Option(name: .customLong("login-hint"), help: ArgumentHelp("The username to sign in as.", valueName: "user"))
    var loginHint: String?

    @Option(help: "text or json.")
    var output: OutputFormat = .text

    @OptionGroup var common: VerbOptions

    func validate() throws {
        if deviceCode, loginHint != nil { throw ValidationError("--login-hint does not apply to --device-code") }
        if importSignIns, deviceCode || loginHint != nil || !scopes.isEmpty {
            throw ValidationError("--import takes no --device-code, --login-hint or --scope")
        }
    }

    func run() throws {
        if importSignIns { return try ImportSignIns.run(common, output: output) }
        try VerbSession.run(common) { session throws(VerbFailure) in
            var params = JSONObject()
            if !scopes.isEmpty { params["scopes"] = JSONValue(scopes) }
            if let loginHint { params["loginHint"] = .string(loginHint) }
            if deviceCode { params["flow"] = "deviceCode" }
            let result = try session.call("acquireToken", .object(params))
            switch output {
            case .json: session.print(VerbOutput.signInSummary(result).jsonText)
            case .text: session.print("Signed in as \(VerbOutput.username(result["account"]))")
            }
        }
    }
}
