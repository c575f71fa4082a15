import Adapters
import ArgumentParser
import JSON
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// `auth-sidecar kubectl-credential`: a kubectl exec credential plugin. Prints an
/// `ExecCredential` in the apiVersion `KUBERNETES_EXEC_INFO` names, with a token acquired
/// silently (an access token, or with `--id-token` the ID token) and its expiry, so kubectl
/// keeps it for its whole run. When a sign-in is needed and kubectl says the plugin may
/// interact, it runs the device code sign-in (messages on stderr); otherwise it fails with exit
/// status 2 and a message naming `auth-sidecar login`. Stdout carries only the credential.
struct KubectlCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kubectl-credential",
        abstract: "A kubectl exec credential plugin: an ExecCredential with an Entra token (AKS by default).",
        discussion: """
            In a kubeconfig user: exec: {apiVersion: client.authentication.k8s.io/v1, command: auth-sidecar, \
            args: [kubectl-credential], interactiveMode: IfAvailable}. For a cluster whose kube-apiserver \
            trusts the issuer itself (--oidc-issuer-url, --oidc-client-id = this client id): \
            args: [kubectl-credential, --id-token]. An Azure Arc-enabled cluster (kubelogin's PoP shape): \
            args: [kubectl-credential, --pop-claims, "u=<ARM id of the cluster>"]: the credential is a signed \
            HTTP request whose u is the cluster's ARM id, made with the cache's proof-of-possession key. \
            Exit status as the other verbs.
            """)

    @Option(
        help: ArgumentHelp(
            "The scope (default: AKS's \(ExecCredential.aksScope); with --id-token, the configured scopes).",
            valueName: "scope"))
    var scope: String?

    @Flag(
        name: .customLong("id-token"),
        help: "Put the ID token (audience: this client id) in the credential instead of an access token.")
    var idToken = false

    @Option(
        name: .customLong("pop-claims"),
        help: ArgumentHelp(
            "A proof-of-possession token for an Azure Arc-enabled cluster, kubelogin's shape: key=value pairs, comma-separated, u (the cluster's ARM id) required.",
            valueName: "u=<ARM id>"))
    var popClaims: String?

    @OptionGroup var common: VerbOptions

    mutating func validate() throws {
        if popClaims != nil, idToken { throw ValidationError("--pop-claims and --id-token ask for two kinds of credential; give one") }
        if let popClaims, Self.popResource(popClaims) == nil {
            throw ValidationError(
                "--pop-claims: give key=value pairs, comma-separated, with u, the ARM id of the cluster (u=/subscriptions/…/connectedClusters/NAME)")
        }
    }

    /// The `u` claim of kubelogin's `--pop-claims` (`key=value` pairs, comma-separated; every key
    /// and value non-empty, `u` required); `nil` when malformed.
    static func popResource(_ claims: String) -> String? {
        var pairs: [String: String] = [:]
        for claim in claims.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = claim.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            let key = trimmed(parts[0])
            let value = trimmed(parts[1])
            guard !key.isEmpty, !value.isEmpty else { return nil }
            pairs[key] = value
        }
        return pairs["u"]
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    /// The scope to ask for: `--scope`, else AKS's, else with `--id-token` none (the configured scopes).
    var requestedScope: String? { scope ?? (idToken ? nil : ExecCredential.aksScope) }

    /// An ID token with less than this left is renewed first (as an access token would be).
    static let idTokenMarginSeconds: Int64 = 300

    func run() throws {
        let info: ExecCredential.ExecInfo
        do { info = try ExecCredential.execInfo(ProcessEnvironment.value("KUBERNETES_EXEC_INFO")) } catch {
            Console.say("kubectl-credential: \(error.description)")
            throw ExitCode(VerbFailure.failureStatus)
        }
        try VerbSession.run(common) { session throws(VerbFailure) in
            var request = AcquireTokenSilentRequest(scopes: requestedScope.map { [$0] })
            if let popClaims, let resource = Self.popResource(popClaims) {
                // kubelogin's Azure Arc PoP token: u = the cluster's ARM id, the claims as client_claims.
                request.proofOfPossession = PopTargetParams(resourceId: resource, clientClaims: popClaims)
            }
            var result: TokenResponse
            switch try session.outcome(request) {
            case .success(let value): result = value
            case .failure(let error) where info.interactive && VerbFailure.isSignInNeeded(error):
                Console.say("a sign-in is needed for kubectl; starting a device code sign-in")
                switch try session.outcome(AcquireTokenRequest(flow: .deviceCode, scopes: request.scopes)) {
                case .success(let value): result = value
                case .failure(let error):
                    throw SignInFailure.deviceCodeRefused(error, host: SignInEnvironment.current().sshHost) ?? .from(error)
                }
                // A device code sign-in brings a bearer token: the PoP one, now silent, after it.
                if request.proofOfPossession != nil { result = try session.call(request) }
            case .failure(let error): throw .from(error)
            }
            if idToken, Self.idTokenExpiry(result).map({ $0 < Int64(time(nil)) + Self.idTokenMarginSeconds }) ?? true {
                request.forceRefresh = true
                result = try session.call(request)
            }
            let credential =
                idToken ? Self.idTokenCredential(result) : popClaims != nil ? Self.popCredential(result) : Self.accessTokenCredential(result)
            guard let (token, expiresOn) = credential else {
                throw VerbFailure(
                    message: "kubectl-credential: the engine's answer has no \(idToken ? "idToken" : "accessToken or expiresOn")")
            }
            session.print(ExecCredential.json(token: token, expiresOn: expiresOn, apiVersion: info.apiVersion).jsonText)
        }
    }

    private static func idTokenExpiry(_ result: TokenResponse) -> Int64? {
        result.idToken.flatMap(JWTClaims.expiry)
    }

    private static func idTokenCredential(_ result: TokenResponse) -> (String, Int64)? {
        guard let token = result.idToken, let expiry = JWTClaims.expiry(token) else { return nil }
        return (token, expiry)
    }

    /// The signed HTTP request, as kubelogin puts it in the credential (kubectl sends it after
    /// `Bearer `, as Azure Arc's guard reads it), and the token's expiry.
    private static func popCredential(_ result: TokenResponse) -> (String, Int64)? {
        result.signedHttpRequest.map { ($0, result.expiresOn) }
    }

    private static func accessTokenCredential(_ result: TokenResponse) -> (String, Int64)? {
        (result.accessToken, result.expiresOn)
    }
}
