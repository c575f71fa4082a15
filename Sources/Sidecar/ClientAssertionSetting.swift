import AuthCore
import JSON
import JSONRPC

/// The `clientAssertion` key: where a confidential client's client assertion comes from
/// (workload identity federation in CI). Set, the engine answers app tokens (no user), the
/// assertion read from the source at each exchange. One source:
/// `{"file": PATH}`, `{"githubActions": {"audience": ...}}`,
/// `{"azurePipelines": {"serviceConnectionId": ...}}` or `{"command": [argv]}`.
public enum ClientAssertionSetting: Sendable, Equatable {
    case file(String)
    case githubActions(audience: String)
    case azurePipelines(serviceConnectionId: String)
    case command([String])

    static let key = "clientAssertion"

    /// The key's value from `params` (`nil`: not set).
    init?(_ params: Params) throws(RPCError) {
        guard let value = params.members[Self.key], !value.isNull else { return nil }
        let member = Self.key
        let p = try Params(value, allowed: ["file", "githubActions", "azurePipelines", "command"], path: member)
        guard p.members.count == 1 else {
            throw .invalidParams("'\(member)' takes one source: file, githubActions, azurePipelines or command", member: member)
        }
        if let path: String = try p.optional("file") {
            guard path.hasPrefix("/") else { throw .invalidParams("\(member).file must be an absolute path", member: "\(member).file") }
            self = .file(path)
        } else if let github = try p.nested("githubActions", allowed: ["audience"]) {
            self = .githubActions(audience: try github.optional("audience") ?? GitHubActionsAssertionSource.defaultAudience)
        } else if let pipelines = try p.nested("azurePipelines", allowed: ["serviceConnectionId"]) {
            self = .azurePipelines(serviceConnectionId: try pipelines.required("serviceConnectionId"))
        } else {
            let command: [String] = try p.required("command")
            guard command.first.map({ !$0.isEmpty }) == true else {
                throw .invalidParams("\(member).command must name a program", member: "\(member).command")
            }
            self = .command(command)
        }
    }

    /// The key's value as `initialize` takes it.
    public var json: JSONValue {
        switch self {
        case .file(let path): ["file": .string(path)]
        case .githubActions(let audience): ["githubActions": ["audience": .string(audience)]]
        case .azurePipelines(let id): ["azurePipelines": ["serviceConnectionId": .string(id)]]
        case .command(let argv): ["command": JSONValue(argv)]
        }
    }

    /// The source the engine reads at each exchange (environment variables read then).
    func source(variable: @escaping @Sendable (String) -> String? = ProcessEnvironment.value) -> any ClientAssertionSource {
        switch self {
        case .file(let path): FileAssertionSource(path: path)
        case .githubActions(let audience): GitHubActionsAssertionSource(audience: audience, variable: variable)
        case .azurePipelines(let id): AzurePipelinesAssertionSource(serviceConnectionId: id, variable: variable)
        case .command(let argv): CommandAssertionSource(arguments: argv)
        }
    }
}
