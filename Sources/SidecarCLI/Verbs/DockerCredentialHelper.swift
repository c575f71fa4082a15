import Adapters
import JSON
import Sidecar
import TokenCache

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `docker-credential-auth-sidecar` entry point (a link to this binary, or
/// `auth-sidecar docker-credential ACTION`): a docker-credential-helpers helper, as docker,
/// podman, buildah and skopeo run it for a registry whose `credHelpers` entry is `auth-sidecar`.
///
/// `get` (the server URL on stdin), for a registry of ``ContainerRegistries`` (ACR's login
/// servers, `containerRegistries`): the registry's refresh token, got as `az acr login` gets it
/// (an access token for Resource Manager, acquired silently, exchanged at
/// `https://REGISTRY/oauth2/exchange`: ``RegistryExchange``), printed as
/// `{"ServerURL", "Username": "00000000-0000-0000-0000-000000000000", "Secret"}`; kept until
/// shortly before it expires in the kernel keyring (``ExpiringKernelSecret``), never in a file.
/// Any other registry: the protocol's "credentials not found" (stdout, exit 1), and no token
/// leaves. `store` keeps nothing (a sign-in is the credential); `erase` drops the kept refresh
/// token; `list` prints `{}`; `version` the sidecar's version.
enum DockerCredentialHelper {
    /// ACR's user name for a refresh token (`az acr login`'s).
    static let username = "00000000-0000-0000-0000-000000000000"
    /// The scope of the Entra token exchanged (Resource Manager's, as `az acr login` asks).
    static let exchangeScope = "https://management.core.windows.net//.default"
    /// The message docker-credential-helpers' client reads as "no credentials".
    static let notFound = "credentials not found in native keychain"
    /// A refresh token is kept until this many seconds before its `exp`.
    static let expiryMargin: Int64 = 300
    /// The most read from stdin (a server URL; `store`'s JSON).
    static let inputLimit = 64 * 1024

    /// Answers `action`; returns the exit status.
    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count == 1, let action = arguments.first else {
            return usage()
        }
        switch action {
        case "get": return get()
        case "store": return store()
        case "erase": return erase()
        case "list":
            Console.write("{}\n", to: STDOUT_FILENO)
            return 0
        case "version":
            Console.write("docker-credential-auth-sidecar (auth-sidecar \(ServerInfo.version))\n", to: STDOUT_FILENO)
            return 0
        case "-h", "--help":
            Console.write(help, to: STDOUT_FILENO)
            return 0
        default: return usage()
        }
    }

    static let help = """
        Usage: docker-credential-auth-sidecar <store|get|erase|list|version>

        A docker credential helper: for an Azure Container Registry (NAME.azurecr.io, .azurecr.cn,
        .azurecr.us) or a registry listed in containerRegistries, 'get' answers the registry's refresh
        token for the signed-in account (exchanged as az acr login does); other registries: not found.
        Set it up with 'auth-sidecar docker-config'.

        """

    private static func usage() -> Int32 {
        Console.say("usage: docker-credential-auth-sidecar <store|get|erase|list|version>")
        return 1
    }

    /// The registries in force, or the configuration's problem.
    private static func registries() -> Result<ContainerRegistries, VerbFailure> {
        do {
            let sources = try ConfigurationSources.load(LaunchOptions())
            let configured = sources.overrides.containerRegistries ?? []
            if let problem = ContainerRegistries.problem(configured) { return .failure(VerbFailure(message: problem)) }
            return .success(ContainerRegistries(configured))
        } catch {
            return .failure(VerbFailure(message: error.message))
        }
    }

    /// Where a registry's refresh token is kept: per registry and per configuration (client,
    /// authority, cache), so another account's configuration never reads it.
    static func keptSecret(registry: String) -> ExpiringKernelSecret {
        let sources = try? ConfigurationSources.load(LaunchOptions())
        let identity = sources.map { $0.overrides.json.jsonText + ($0.profile ?? "") } ?? ""
        return ExpiringKernelSecret(name: "acr:\(registry):\(fnv1a(identity))")
    }

    private static func get() -> Int32 {
        let serverURL = String(decoding: Console.readInput(limit: inputLimit), as: UTF8.self).filter { $0 != "\n" && $0 != "\r" }
        let registries: ContainerRegistries
        switch Self.registries() {
        case .failure(let failure):
            Console.say(failure.message)
            return 1
        case .success(let value): registries = value
        }
        guard let registry = registries.registry(forServerURL: serverURL) else {
            Console.write(notFound + "\n", to: STDOUT_FILENO)
            return 1
        }
        let kept = keptSecret(registry: registry)
        if let token = kept.load() {
            Console.write(answer(serverURL: serverURL, secret: token) + "\n", to: STDOUT_FILENO)  // no session: fd 1 is stdout
            return 0
        }
        let status = VerbSession.exitStatus(VerbLaunchOptions()) { session throws(VerbFailure) in
            let result = try session.call(AcquireTokenSilentRequest(scopes: [exchangeScope]), pipelined: true)
            let token = result.accessToken
            let tenant = JWTClaims.payload(token)?["tid"]?.stringValue ?? result.tenantId
            let refreshToken: String
            switch RegistryExchange.refreshToken(registry: registry, accessToken: token, tenant: tenant) {
            case .failure(let failure): throw VerbFailure(message: "the registry's token exchange failed: \(failure.reason)")
            case .success(let value): refreshToken = value
            }
            if let expiry = JWTClaims.expiry(refreshToken) {
                let seconds = expiry - expiryMargin - Int64(time(nil))
                if seconds > 0 { kept.store(refreshToken, seconds: Int(seconds)) }
            }
            session.print(answer(serverURL: serverURL, secret: refreshToken))
        }
        return status == 0 ? 0 : 1
    }

    /// `get`'s answer: the protocol's JSON object.
    private static func answer(serverURL: String, secret: String) -> String {
        JSONValue.object(["ServerURL": .string(serverURL), "Username": .string(username), "Secret": .string(secret)]).jsonText
    }

    /// `store`: nothing is kept (the credential is the sign-in); a registry not ours is refused.
    private static func store() -> Int32 {
        let input = Console.readInput(limit: inputLimit)
        guard let server = (try? JSONValue.parse(input))?["ServerURL"]?.stringValue else {
            Console.say("store: expected {\"ServerURL\", \"Username\", \"Secret\"} on stdin")
            return 1
        }
        guard case .success(let known) = Self.registries(), known.registry(forServerURL: server) != nil else {
            Console.say("store: auth-sidecar keeps no credentials; \(server) is not an Azure Container Registry nor in containerRegistries")
            return 1
        }
        return 0
    }

    /// `erase`: the kept refresh token is dropped (the next `get` exchanges anew).
    private static func erase() -> Int32 {
        let serverURL = String(decoding: Console.readInput(limit: inputLimit), as: UTF8.self).filter { $0 != "\n" && $0 != "\r" }
        if case .success(let known) = Self.registries(), let registry = known.registry(forServerURL: serverURL) {
            keptSecret(registry: registry).remove()
        }
        return 0
    }

    /// FNV-1a, 64 bits, in hex: a short name for a configuration (not a secret).
    static func fnv1a(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
