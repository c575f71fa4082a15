import ArgumentParser
import JSON
import JSONRPC
import POSIXSupport
import Sidecar

/// `auth-sidecar login --import`: ``SignInImport`` on the configured cache (no engine: the
/// file is filled under its lock; a running agent sees the change at its next read).
enum ImportSignIns {
    static func run(_ options: VerbOptions, output: OutputFormat) throws {
        let stdout = StandardStreams.reserveStdoutForProtocol()
        do {
            let sources = try ConfigurationSources.load(options.configuration.launchOptions)
            let outcome = try SignInImport.run(sources.overrides)
            for problem in outcome.problems { Console.say("warning: \(problem)") }
            let text: String
            switch output {
            case .json:
                let result: JSONObject = [
                    "imported": JSONValue(outcome.usernames), "sources": JSONValue(outcome.sources),
                    "problems": JSONValue(outcome.problems),
                ]
                text = JSONValue.object(result).jsonText
            case .text:
                text =
                    "Imported \(outcome.usernames.count) account\(outcome.usernames.count == 1 ? "" : "s") from "
                    + outcome.sources.joined(separator: " and ") + ": " + outcome.usernames.joined(separator: ", ")
            }
            guard POSIX.writeAll(stdout, Array((text + "\n").utf8)) else { throw ExitCode(VerbFailure.failureStatus) }
        } catch let error as RPCError {
            Console.say(error.message)
            throw ExitCode(VerbFailure.failureStatus)
        }
    }
}
