import Adapters
import ArgumentParser
import JSON
import POSIXSupport
import Sidecar

#if canImport(Glibc)
    import Glibc
#endif

/// `auth-sidecar docker-config [REGISTRY...]`: the `credHelpers` entries that send docker,
/// podman, buildah and skopeo to `docker-credential-auth-sidecar` for the registries named
/// and those of `containerRegistries`. Prints them; with `--write FILE` (the user's consent,
/// once per file) merges them into that JSON file (docker's `config.json`, containers'
/// `auth.json`), every other member kept, replaced atomically (a new file: mode 0600).
struct DockerConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docker-config",
        abstract: "Print (or write) the credHelpers entries for docker's config.json and containers' auth.json.",
        discussion: """
            Each registry (an Azure Container Registry, NAME.azurecr.io, or one listed in containerRegistries) \
            gets "credHelpers": {"REGISTRY": "auth-sidecar"}, which runs docker-credential-auth-sidecar. \
            --write ~/.docker/config.json (docker) or --write ${XDG_RUNTIME_DIR}/containers/auth.json \
            (podman, buildah, skopeo) merges them into that file.
            """)

    @Argument(help: ArgumentHelp("Registries (host[:port]) besides containerRegistries.", valueName: "registry"))
    var registries: [String] = []

    @Option(help: ArgumentHelp("Merge the entries into this JSON file (repeatable).", valueName: "file"))
    var write: [String] = []

    @OptionGroup var common: VerbOptions

    func run() throws {
        let sources: ConfigurationSources
        do { sources = try ConfigurationSources.load(common.configuration.launchOptions) } catch {
            Console.say(error.message)
            throw ExitCode(VerbFailure.failureStatus)
        }
        let configured = sources.overrides.containerRegistries ?? []
        if let problem = ContainerRegistries.problem(configured) {
            Console.say(problem)
            throw ExitCode(VerbFailure.failureStatus)
        }
        let known = ContainerRegistries(configured)
        var names = configured.map { $0.lowercased() }
        for given in registries {
            guard let registry = known.registry(forServerURL: given) else {
                Console.say("\(given) is neither an Azure Container Registry (NAME.azurecr.io) nor listed in containerRegistries")
                throw ExitCode(VerbFailure.failureStatus)
            }
            if !names.contains(registry) { names.append(registry) }
        }
        guard !names.isEmpty else {
            Console.say("no registry: name one (NAME.azurecr.io) or list them in containerRegistries")
            throw ExitCode(VerbFailure.failureStatus)
        }
        let helpers = JSONObject(names.map { ($0, JSONValue.string("auth-sidecar")) })
        for path in write {
            do throws(VerbFailure) { try Self.merge(helpers, into: path) } catch {
                Console.say(error.message)
                throw ExitCode(error.status)
            }
            Console.say("wrote credHelpers for \(names.joined(separator: ", ")) to \(path)")
        }
        if write.isEmpty { Console.write(JSONValue.object(["credHelpers": .object(helpers)]).indentedText() + "\n", to: STDOUT_FILENO) }
    }

    /// `helpers` merged into the `credHelpers` of the JSON object in `path` (created, with its
    /// directory, when missing).
    static func merge(_ helpers: JSONObject, into path: String) throws(VerbFailure) {
        var document = JSONObject()
        var exists = false
        if let bytes = try? POSIX.readOwnFile(path, limit: 1 << 20) {
            exists = true
            guard let object = (try? JSONValue.parse(bytes))?.objectValue else {
                throw VerbFailure(message: "\(path) is not a JSON object; not rewritten")
            }
            document = object
        } else if access(path, F_OK) == 0 {
            throw VerbFailure(message: "cannot read \(path) (not this user's own regular file?); not rewritten")
        }
        var merged = document["credHelpers"]?.objectValue ?? JSONObject()
        for (name, value) in helpers { merged[name] = value }
        document["credHelpers"] = .object(merged)
        if !exists, let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let directory = String(path[..<slash])
            if access(directory, F_OK) != 0, mkdir(directory, 0o700) != 0 {
                throw VerbFailure(message: "cannot create \(directory): \(POSIX.lastErrorString)")
            }
        }
        try ProfileFileRewrite.replace(path, with: Array((JSONValue.object(document).indentedText() + "\n").utf8), mode: exists ? nil : 0o600)
    }
}
