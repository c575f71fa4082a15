import AuthCore
import JSONRPC
import POSIXSupport
import TokenCache

#if canImport(Glibc)
    import Glibc
#endif

/// `auth-sidecar login --import` (and `status`'s hint): the sign-ins other tools already made
/// on this machine, read only, moved into an empty cache so a first run needs no new sign-in.
/// What moves is ``CacheImport``'s rule (our authority's environments only; our client's own
/// or family refresh tokens; their accounts and ID tokens). Sources, in order:
/// - Azure CLI's `msal_token_cache.json` in `$AZURE_CONFIG_DIR`, else `~/.azure` (MSAL's plain
///   JSON on Linux); opened read-only, never changed (not even its mode);
/// - azure-identity for Python's Secret Service item (schema `msal.cache.nocae`, attribute
///   `MsalClientID=Microsoft.Developer.IdentityService`, the cache JSON as the secret), looked
///   up only (no write), when there is a D-Bus session.
public enum SignInImport {
    /// Azure CLI's client id (a Microsoft first-party client of family 1).
    public static let azureCLIClientID = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
    /// azure-identity's Secret Service item.
    public static let identitySchema = "msal.cache.nocae"
    public static let identityAttributes = ["MsalClientID": "Microsoft.Developer.IdentityService"]

    /// One source with something to import.
    public struct Found: Sendable {
        public let source: String
        public let plan: CacheImport
    }

    /// What the sources offer, and the ones that could not be read.
    public struct Scan: Sendable {
        public var found: [Found] = []
        /// One line per source that exists but cannot be used (malformed, unreadable).
        public var problems: [String] = []
        /// Distinct usernames over all sources.
        public var usernames: [String] {
            var seen = Set<String>()
            return found.flatMap(\.plan.usernames).filter { seen.insert($0.lowercased()).inserted }
        }
    }

    /// What was imported.
    public struct Outcome: Sendable {
        public let usernames: [String]
        public let sources: [String]
        public let problems: [String]
    }

    /// Azure CLI's cache file.
    public static func azureCLICachePath(environment: [String: String] = ProcessEnvironment.all()) -> String {
        let directory = environment["AZURE_CONFIG_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? ((UserPaths.home { environment[$0] } ?? "") + "/.azure")
        return directory + "/msal_token_cache.json"
    }

    /// Reads every source for `configuration`'s client and authority; writes nothing.
    public static func scan(
        _ configuration: Configuration, environment: [String: String] = ProcessEnvironment.all(),
        secretService: (any SecretServiceAccess)? = LibsecretService()
    ) -> Scan {
        guard let authority = try? Authority(configuration.authority, declared: configuration.authorityType.flatMap(Authority.Kind.init))
        else { return Scan() }
        let environments = authority.sharesHostAliases ? EnvironmentAliases.of(authority.host) : [authority.cacheEnvironment]
        var scan = Scan()
        func consider(_ source: String, _ bytes: [UInt8]) {
            do throws(CacheDocument.DocumentError) {
                let plan = CacheImport(from: try CacheDocument(parsing: bytes), environments: environments, clientId: configuration.clientId)
                if !plan.isEmpty { scan.found.append(Found(source: source, plan: plan)) }
            } catch {
                scan.problems.append("\(source): not an MSAL token cache (\(error.reason)); left untouched")
            }
        }
        let file = azureCLICachePath(environment: environment)
        do throws(FileRefusal) {
            // The own-file rule, the directory included: a file or directory another user can
            // write (or link) could hold their account, to be imported as the user's.
            if let bytes = try POSIX.readOwnFile(file, limit: 64 << 20, checkingDirectory: true) {
                consider("Azure CLI (\(file))", bytes)
            }
        } catch {
            scan.problems.append("Azure CLI (\(error.path)): refused, left untouched: \(error.reason)")
        }
        if let secretService, let bus = environment["DBUS_SESSION_BUS_ADDRESS"], !bus.isEmpty {
            let source = "azure-identity (Secret Service item \(identitySchema))"
            switch secretService.lookup(schema: identitySchema, attributes: identityAttributes) {
            case .success(let secret?): consider(source, Array(secret.utf8))
            case .success(nil): break
            case .failure(.libraryMissing): break  // no libsecret: no item either
            case .failure(let failure): scan.problems.append("\(source): \(failure)")
            }
        }
        return scan
    }

    /// How many accounts an import would bring, and the sources refused or unreadable (for
    /// `status`, when the cache is empty).
    public static func importable(_ overrides: ConfigurationOverrides) -> (count: Int, problems: [String]) {
        guard let configuration = try? overrides.resolved() else { return (0, []) }
        let scan = scan(configuration)
        return (scan.usernames.count, scan.problems)
    }

    /// Imports into the configured cache, which must hold no sign-in yet.
    /// - Throws: -51005 when the cache cannot be opened; -32602 when the configuration is
    ///   incomplete; -51005 `nothingToImport`-style messages when the cache is not empty or no
    ///   source has a sign-in for this client and authority (the sources' problems included).
    public static func run(_ overrides: ConfigurationOverrides) throws(RPCError) -> Outcome {
        let configuration = try overrides.resolved()
        let scan = scan(configuration)
        guard !scan.found.isEmpty else {
            let why = scan.problems.isEmpty ? "" : ":\n" + scan.problems.map { "  " + $0 }.joined(separator: "\n")
            throw ConfiguredCacheFile.failure(
                "nothing to import for client \(configuration.clientId) at \(configuration.authority): no sign-in in Azure CLI's cache (\(azureCLICachePath())) or azure-identity's Secret Service item\(why)"
            )
        }
        let store = try ConfiguredCacheFile.open(overrides, purpose: "import into")
        let imported: Bool
        do {
            imported = try store.transaction { document in
                guard document.isEmptyOfSignIns else { return false }
                for found in scan.found { document.apply(found.plan) }
                return true
            }
        } catch let error as TokenCacheError {
            throw ConfiguredCacheFile.failure(error.description)
        } catch {
            throw ConfiguredCacheFile.failure("\(error)")
        }
        guard imported else {
            throw ConfiguredCacheFile.failure(
                "the token cache \(store.path) already holds sign-ins; --import fills an empty cache only (auth-sidecar logout first)")
        }
        return Outcome(usernames: scan.usernames, sources: scan.found.map(\.source), problems: scan.problems)
    }
}
