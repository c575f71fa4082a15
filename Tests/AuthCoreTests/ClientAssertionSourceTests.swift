import AuthSeams
import AuthTestSupport
import Testing

@testable import AuthCore

/// The client assertion sources, each read afresh: CI token endpoints over a scripted
/// transport, a command, a file.
@Suite struct ClientAssertionSourceTests {
    static let jwt = Tokens.jwt(#"{"sub":"job","exp":1700000000}"#)

    @Test func azurePipelinesAsksForTheServiceConnectionsToken() async throws {
        let http = FakeHTTPTransport { _ in HTTPResponse(status: 200, body: Array(#"{"oidcToken":"\#(Self.jwt)"}"#.utf8)) }
        let variables = ["SYSTEM_OIDCREQUESTURI": "https://dev.azure.example/oidc?x=1", "SYSTEM_ACCESSTOKEN": "sys-token"]
        let source = AzurePipelinesAssertionSource(serviceConnectionId: "sc 1", variable: { variables[$0] })
        let assertion = try await source.assertion(transport: http)
        #expect(assertion.jwt == Self.jwt && assertion.expiresOn == 1_700_000_000)
        let request = try #require(http.requests.first)
        #expect(request.method == "POST" && request.url == "https://dev.azure.example/oidc?x=1&api-version=7.1&serviceConnectionId=sc%201")
        #expect(request.headers.contains { $0.name == "Authorization" && $0.value == "Bearer sys-token" })
    }

    @Test func gitHubActionsAddsTheAudienceAndNamesMissingVariables() async throws {
        let http = FakeHTTPTransport { _ in HTTPResponse(status: 200, body: Array(#"{"count":1,"value":"\#(Self.jwt)"}"#.utf8)) }
        let variables = ["ACTIONS_ID_TOKEN_REQUEST_URL": "https://pipelines.example/token?api-version=2.0", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "req"]
        let source = GitHubActionsAssertionSource(variable: { variables[$0] })
        #expect(try await source.assertion(transport: http).jwt == Self.jwt)
        #expect(http.requests.first?.url == "https://pipelines.example/token?api-version=2.0&audience=api%3A%2F%2FAzureADTokenExchange")
        let unset = GitHubActionsAssertionSource(variable: { _ in nil })
        let error = await #expect(throws: AuthError.self) { try await unset.assertion(transport: http) }
        #expect(error?.message.contains("id-token: write") == true && error?.message.contains("GitHub Actions") == true)
    }

    @Test func anEndpointsRefusalOrOddAnswerIsNamed() async throws {
        let variables = ["ACTIONS_ID_TOKEN_REQUEST_URL": "https://pipelines.example/t", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "req"]
        let source = GitHubActionsAssertionSource(variable: { variables[$0] })
        for (status, body) in [(403, "{}"), (200, "[]"), (200, #"{"value": 1}"#), (200, #"{"value": "no-jwt"}"#)] {
            let http = FakeHTTPTransport { _ in HTTPResponse(status: status, body: Array(body.utf8)) }
            let error = await #expect(throws: AuthError.self) { try await source.assertion(transport: http) }
            #expect(error?.message.hasPrefix("the client assertion from GitHub Actions could not be read") == true)
        }
    }

    @Test func aCommandsOutputIsTheAssertion() async throws {
        let source = CommandAssertionSource(arguments: ["/bin/sh", "-c", "printf '%s\\n' '\(Self.jwt)'"])
        #expect(try await source.assertion(transport: FakeHTTPTransport { _ in HTTPResponse(status: 500) }).jwt == Self.jwt)
        let failing = CommandAssertionSource(arguments: ["/bin/sh", "-c", "exit 3"])
        let error = await #expect(throws: AuthError.self) {
            try await failing.assertion(transport: FakeHTTPTransport { _ in HTTPResponse(status: 500) })
        }
        #expect(error?.message.contains("exited with status 3") == true)
    }

    @Test func aMissingFileIsNamed() async throws {
        let source = FileAssertionSource(path: "/nonexistent/azure-identity-token")
        let error = await #expect(throws: AuthError.self) {
            try await source.assertion(transport: FakeHTTPTransport { _ in HTTPResponse(status: 500) })
        }
        #expect(error?.message.contains("file /nonexistent/azure-identity-token") == true && error?.kind == .invalidConfiguration)
    }
}
