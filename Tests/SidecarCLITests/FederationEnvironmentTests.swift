import JSON
import JSONRPC
import Sidecar
import Testing

@testable import SidecarCLI

/// With no configuration file, the CI variables alone configure an app's sign-in
/// (`FederationEnvironment`); a file, when there is one, wins.
@Suite struct FederationEnvironmentTests {
    static let github = [
        "AZURE_CLIENT_ID": "app-1", "AZURE_TENANT_ID": "tid-1",
        "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.example/x?a=1", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "req",
    ]

    private func load(_ variables: [String: String], file: String? = nil) throws -> ConfigurationSources {
        let home = try ConfigurationSourcesTests.configHome(file)
        return try ConfigurationSources.load(LaunchOptions(), environment: { $0 == "XDG_CONFIG_HOME" ? home : variables[$0] })
    }

    @Test func gitHubActionsVariablesConfigureTheApp() throws {
        let sources = try load(Self.github)
        #expect(sources.overrides.clientId == "app-1")
        #expect(sources.overrides.authority == "https://login.microsoftonline.com/tid-1")
        #expect(sources.overrides.clientAssertion == .githubActions(audience: "api://AzureADTokenExchange"))
        #expect(sources.overrides.scopes == ["https://management.azure.com/.default"])
        #expect(sources.origins.first?.hasPrefix("environment") == true)
    }

    @Test func theTokenFileWinsAndTheAuthorityHostIsAzureIdentitys() throws {
        var variables = Self.github
        variables["AZURE_FEDERATED_TOKEN_FILE"] = "/var/run/secrets/azure/tokens/azure-identity-token"
        variables["AZURE_AUTHORITY_HOST"] = "login.microsoftonline.us/"
        let sources = try load(variables)
        #expect(sources.overrides.clientAssertion == .file("/var/run/secrets/azure/tokens/azure-identity-token"))
        #expect(sources.overrides.authority == "https://login.microsoftonline.us/tid-1")
    }

    @Test func missingVariablesOrAFileConfigureNothingHere() throws {
        var partial = Self.github
        partial["AZURE_TENANT_ID"] = nil
        #expect(try load(partial).overrides.clientAssertion == nil)
        var noSource = Self.github
        noSource["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = ""
        #expect(try load(noSource).overrides.clientId == nil)
        let withFile = try load(Self.github, file: #"{"clientId": "from-file"}"#)
        #expect(withFile.overrides.clientId == "from-file" && withFile.overrides.clientAssertion == nil)
    }

    @Test(arguments: [
        (#"{"file": "/run/token"}"#, ClientAssertionSetting.file("/run/token")),
        (#"{"githubActions": {}}"#, .githubActions(audience: "api://AzureADTokenExchange")),
        (#"{"githubActions": {"audience": "api://other"}}"#, .githubActions(audience: "api://other")),
        (#"{"azurePipelines": {"serviceConnectionId": "sc-1"}}"#, .azurePipelines(serviceConnectionId: "sc-1")),
        (#"{"command": ["print-token", "--now"]}"#, .command(["print-token", "--now"])),
    ])
    func theKeyRoundTrips(text: String, setting: ClientAssertionSetting) throws {
        let parsed = try ConfigurationOverrides(params: ["clientAssertion": try JSONValue.parse(text)])
        #expect(parsed.clientAssertion == setting)
        #expect(try ConfigurationOverrides(params: parsed.json).clientAssertion == setting)
    }

    @Test(arguments: [
        #"{"file": "relative"}"#, #"{"file": "/a", "command": ["b"]}"#, #"{}"#, #"{"azurePipelines": {}}"#,
        #"{"command": []}"#, #"{"shell": "x"}"#,
    ])
    func badValuesNameTheKey(text: String) throws {
        #expect(throws: RPCError.self) { try ConfigurationOverrides(params: ["clientAssertion": try JSONValue.parse(text)]) }
    }
}
