import ArgumentParser
import JSON
import JSONRPC
import Sidecar

/// `auth-sidecar profiles`: the configuration file's profiles, each with its signed-in account.
struct ProfilesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profiles",
        abstract: "List the configuration file's profiles, each with its signed-in account; the default is marked.",
        discussion: """
            A configuration file either holds the keys themselves (one profile, 'default') or named profiles: \
            {"profiles": {"work": {...}, "b2c-test": {...}}, "defaultProfile": "work"}. Every verb and mode takes \
            --profile NAME (or AUTH_SIDECAR_PROFILE); without one, the file's defaultProfile is used. One line per \
            profile (name, account or 'not signed in', authority, '(default)'), or --output json: \
            {"file": PATH, "defaultProfile": NAME, "profiles": [{"name", "isDefault", "account", "authority", \
            "clientId", "error"}]}.
            """,
        subcommands: [ProfilesUseCommand.self])

    @Option(help: "text or json.")
    var output: OutputFormat = .text

    @OptionGroup var common: VerbOptions

    func run() throws {
        var plain = common.plain
        plain.launch.profile = nil
        let sources: ConfigurationSources
        do {
            sources = try ConfigurationSources.load(plain.launch, requireProfile: false, environment: ConfigurationSources.environmentIgnoringProfile)
        } catch {
            Console.say(error.message)
            throw ExitCode(VerbFailure.failureStatus)
        }
        guard let file = sources.profiles.file else {
            Console.say("no configuration file: write one at \(UserPaths.defaultConfigFileForMessages())")
            throw ExitCode(VerbFailure.failureStatus)
        }
        let stdout = StandardStreams.reserveStdoutForProtocol()
        let logger = Launcher.makeLogger(level: plain.launch.logLevel)
        var entries: [JSONValue] = []
        for name in file.profileNames {
            var entry: JSONObject = ["name": .string(name), "isDefault": .bool(name == file.defaultProfileName)]
            do throws(VerbFailure) {
                let chosen: ConfigurationSources
                do { chosen = try sources.selecting(name) } catch { throw VerbFailure(message: error.message) }
                let session = try VerbSession.connect(sources: chosen, useAgent: !plain.noAgent, logger: logger, output: stdout)
                defer { session.client.close() }
                let configuration = try session.configuration
                entry["clientId"] = configuration["clientId"]
                entry["authority"] = configuration["authority"]
                entry["account"] = try session.call(GetCurrentAccountRequest()).account
            } catch {
                entry["error"] = .string(error.message)
            }
            entries.append(.object(entry))
        }
        let result: JSONValue = ["file": .string(file.path), "defaultProfile": JSONValue(file.defaultProfileName), "profiles": .array(entries)]
        let text: String
        switch output {
        case .json: text = result.jsonText
        case .text: text = Self.lines(entries).joined(separator: "\n")
        }
        guard Console.write(text + "\n", to: stdout) else {
            throw ExitCode(VerbFailure.failureStatus)
        }
    }

    /// One aligned line per profile: name, account, authority, `(default)`.
    static func lines(_ entries: [JSONValue]) -> [String] {
        let rows = entries.map { entry -> [String] in
            let account =
                entry["error"]?.stringValue.map { "error: \($0)" }
                ?? (entry["account"]?.isNull == false ? VerbOutput.username(entry["account"]) : "not signed in")
            return [
                entry["name"]?.stringValue ?? "", account, entry["authority"]?.stringValue ?? "",
                entry["isDefault"] == .bool(true) ? "(default)" : "",
            ]
        }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            let padded = (0..<3).map { row[$0] + String(repeating: " ", count: widths[$0] - row[$0].count) }
            return (padded + [row[3]]).joined(separator: "  ").trimmingTrailingSpaces
        }
    }
}

/// `auth-sidecar profiles use NAME`: makes a profile the default (the file's `defaultProfile`).
struct ProfilesUseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Make a profile the default: what every verb and mode uses without --profile or AUTH_SIDECAR_PROFILE.",
        discussion: """
            Rewrites the configuration file's "defaultProfile" (added when absent) and leaves every other byte \
            as it was; the new file replaces the old one atomically (a symbolic link's target is rewritten). An \
            unknown name is refused with the list of profiles. A running agent reads the file when it starts: \
            verbs and stdio processes send their own profile, so they follow the new default at once.
            """)

    @Argument(help: ArgumentHelp("The profile's name.", valueName: "name"), completion: .custom { _, _, _ in ConfigurationSources.profileNames() })
    var name: String

    @ParentCommand var profiles: ProfilesCommand

    func run() throws {
        let output = StandardStreams.reserveStdoutForProtocol()
        do throws(VerbFailure) {
            let path = try ProfileFileRewrite.setDefault(name, options: profiles.common.plain.launch)
            let text =
                profiles.output == .json
                ? (["file": .string(path), "defaultProfile": .string(name)] as JSONValue).jsonText : "Default profile: \(name)"
            _ = Console.write(text + "\n", to: output)
        } catch {
            Console.say(error.message)
            throw ExitCode(error.status)
        }
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
