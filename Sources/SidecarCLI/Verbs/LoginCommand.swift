import Adapters
import ArgumentParser
import AuthSeams
import AzEmulator
import JSON
import Sidecar

/// `auth-sidecar login`: an interactive sign-in, the way this machine allows (``SignInWay``).
struct LoginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in: in a browser, or with a device code on another device; says which way and why.",
        discussion: """
            The way: the system browser with a display or $BROWSER; on WSL the Windows browser \
            (wslview, explorer.exe, cmd.exe); over SSH with no forwarded display, or with neither, \
            a device code (the code, its URL and a countdown on stderr). One stderr line says which \
            way and why; --browser, --device-code or --paste forces one. With --browser and no browser here, \
            the URL is printed with the 'ssh -L' line that forwards the loopback redirect; \
            --redirect-port (the redirectPort key) fixes that port. \
            --paste (for a tenant that blocks the device code, with no port to forward): the URL is \
            printed; sign in in any browser on any machine and paste back, on standard input, the \
            http://localhost address the browser ends on (or its code). \
            Prints 'Signed in as USER' (or --output json: the account, scopes and expiry; no token). \
            --import instead copies, into an empty cache, the sign-ins Azure CLI \
            ($AZURE_CONFIG_DIR or ~/.azure/msal_token_cache.json) and azure-identity (its Secret Service \
            item) already made for this authority: accounts and the refresh tokens this client can use \
            (its own, or family tokens). Those stores are only read. \
            --claims-challenge (with --tenant and --scope) signs in for a resource's claims challenge: \
            the line azure-identity prints ('az login --claims-challenge ...') runs this through the az shim.
            """)

    @Flag(name: .customLong("device-code"), help: "Use the device code flow: sign in on another device with a code.")
    var deviceCode = false

    @Flag(name: .customLong("browser"), help: "Use a browser (the URL is printed when none can be opened here).")
    var browser = false

    @Flag(name: .customLong("paste"), help: "Sign in in any browser and paste back the address it ends on (read from stdin).")
    var paste = false

    @Option(
        name: .customLong("redirect-port"),
        help: ArgumentHelp("The loopback redirect's port, for a forwarded port (ssh -L, an editor's).", valueName: "port"))
    var redirectPort: Int?

    @Flag(name: .customLong("import"), help: "Import Azure CLI's and azure-identity's sign-ins into an empty cache (read only).")
    var importSignIns = false

    @Option(name: .customLong("scope"), help: ArgumentHelp("A scope to consent to (repeatable; default: the configured scopes).", valueName: "scope"))
    var scopes: [String] = []

    @Option(name: .customLong("login-hint"), help: ArgumentHelp("The username to sign in as.", valueName: "user"))
    var loginHint: String?

    @Option(
        name: .customLong("claims-challenge"),
        help: ArgumentHelp("A claims challenge to sign in for (base64, as azure-identity prints it, or JSON).", valueName: "claims"))
    var claimsChallenge: String?

    @Option(name: .customLong("tenant"), help: ArgumentHelp("The tenant to sign in to (GUID or domain).", valueName: "tenant"))
    var tenant: String?

    @Option(help: "text or json.")
    var output: OutputFormat = .text

    @OptionGroup var common: VerbOptions

    func validate() throws {
        if deviceCode, browser { throw ValidationError("--browser and --device-code exclude each other") }
        if paste, deviceCode || browser || redirectPort != nil {
            throw ValidationError("--paste excludes --browser, --device-code and --redirect-port")
        }
        if deviceCode, loginHint != nil { throw ValidationError("--login-hint does not apply to --device-code") }
        if let redirectPort, !(1...65_535).contains(redirectPort) { throw ValidationError("--redirect-port takes a port, 1-65535") }
        if importSignIns,
            deviceCode || browser || paste || redirectPort != nil || loginHint != nil || !scopes.isEmpty || claimsChallenge != nil || tenant != nil
        {
            throw ValidationError(
                "--import takes no --browser, --device-code, --paste, --redirect-port, --login-hint, --scope, --claims-challenge or --tenant")
        }
        if let claimsChallenge, ClaimsChallenge.claims(fromChallenge: claimsChallenge) == nil {
            throw ValidationError("--claims-challenge takes base64 of a JSON object (as in WWW-Authenticate), or the JSON")
        }
        if let tenant, let problem = VerbRequests.tenantProblem(tenant, option: "--tenant") { throw ValidationError(problem) }
    }

    /// What runs, said on stderr: the identity broker's own window when `broker` is on (it
    /// refuses a device code on Linux: `--device-code` too goes to its window), with the usual
    /// way `auto` falls back to.
    static func line(_ way: SignInWay, broker: String?) -> String {
        guard let broker, broker != "off" else { return way.line }
        let fallback = broker == "auto" ? "; without it, \(way.line)" : ""
        return "signing in with the identity broker (broker \"\(broker)\"): its own window asks\(fallback)"
    }

    func run() throws {
        if importSignIns { return try ImportSignIns.run(common, output: output) }
        var options = common.plain
        options.redirectPort = redirectPort
        try VerbSession.run(options) { session throws(VerbFailure) in
            let configuredURI = try session.configuration["redirectUri"]?.stringValue ?? ""
            let fixedPort = (try? RedirectURI(parsing: configuredURI))?.port.map(Int.init)
            let environment = SignInEnvironment.current()
            let forced: SignInWay.Forced? = browser ? .browser : (deviceCode ? .deviceCode : (paste ? .paste : nil))
            var way = SignInWay.choose(environment, forced: forced, redirectPort: fixedPort)
            if loginHint != nil, way.method == .deviceCode {
                // Unforced, so no browser opens here: the device code takes no hint.
                way = SignInWay(method: .printedURL, reason: "--login-hint needs a browser sign-in: open the URL yourself")
            }
            Console.say(Self.line(way, broker: try session.configuration["broker"]?.stringValue))
            session.use(URLOpener.system(way, environment: environment))
            let flow: AcquireTokenRequest.Flow = way.method == .deviceCode ? .deviceCode : way.method == .paste ? .paste : .browser
            var request = AcquireTokenRequest(flow: flow, scopes: scopes.isEmpty ? nil : scopes)
            request.loginHint = loginHint
            request.claims = claimsChallenge.flatMap(ClaimsChallenge.claims(fromChallenge:))
            if let tenant {
                let configured = try session.configuration["authority"]?.stringValue ?? ""
                guard let authority = VerbRequests.authority(configured, tenant: tenant) else {
                    throw VerbFailure(message: "the configured authority \(configured) has no host to put a tenant on")
                }
                request.authority = authority
            }
            let result: TokenResponse
            switch try session.outcome(request) {
            case .success(let value): result = value
            case .failure(let error):
                if way.method == .deviceCode, let refused = SignInFailure.deviceCodeRefused(error, host: environment.sshHost, port: fixedPort) {
                    throw refused
                }
                throw .from(error)
            }
            AzAccounts.forget(cachePath: try? session.configuration["cache"]?["path"]?.stringValue, account: result.account)
            switch output {
            case .json: session.print(VerbOutput.signInSummary(result.result).jsonText)
            case .text: session.print("Signed in as \(VerbOutput.username(result.account))")
            }
        }
    }
}
