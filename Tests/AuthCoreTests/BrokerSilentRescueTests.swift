import AuthSeams
import AuthTestSupport
import JSON
import Logging
import Testing
import TokenCache

@testable import AuthCore

/// `brokerSilentRescue`: a silent call the broker answers InteractionRequired (status 2) is
/// made once more as `acquireTokenInteractively` with the same parameters, bounded by the
/// interactive time limit, only with a display; anything else is answered as before.
@Suite struct BrokerSilentRescueTests {
    static let account = #"{"homeAccountId":"oid-1.tid-1","localAccountId":"oid-1","realm":"tid-1","username":"alice@contoso.com"}"#
    static let token =
        #"{"brokerTokenResponse":{"accessToken":"rescued-at","accessTokenType":0,"expiresOn":1700003600000,"grantedScopes":["User.Read"],"account":"#
        + account + "}}"

    /// A broker whose silent call answers `status`, the interactive one a token at once.
    static func broker(silentStatus status: Int) -> FakeIdentityBroker {
        FakeIdentityBroker { method, _ in
            switch method {
            case .getAccounts: #"{"accounts":["# + account + "]}"
            case .acquireTokenSilently: #"{"brokerTokenResponse":{"error":{"status":\#(status),"context":"AADSTS50076"}}}"#
            default: token
            }
        }
    }

    private func silent(_ broker: FakeIdentityBroker, rescue: Bool, display: String?) async throws -> TokenResult {
        var configuration = ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common"))
        configuration.brokerMode = .required
        configuration.brokerSilentRescue = rescue
        configuration.display = display
        configuration.interactiveTimeout = .seconds(42)
        var dependencies = AuthDependencies(
            transport: FakeHTTPTransport { _ in HTTPResponse(status: 500, body: []) }, cache: TokenCache(store: MemoryTokenCacheStore()),
            clock: ManualClock(), browser: UnusedBrowser(), listener: UnusedListener(), logger: Logger(label: "test"))
        dependencies.broker = broker
        var request = SilentRequest()
        request.scopes = ["User.Read"]
        return try await PublicClientApplication(configuration: configuration, dependencies: dependencies)
            .acquireTokenSilently(request, correlationId: "c-1")
    }

    @Test func statusTwoIsAskedInteractivelyOnceWithTheSameParameters() async throws {
        let broker = Self.broker(silentStatus: 2)
        let result = try await silent(broker, rescue: true, display: "DISPLAY=:0")
        #expect(result.accessToken == "rescued-at")
        #expect(broker.calls.map(\.method) == [.getAccounts, .acquireTokenSilently, .acquireTokenInteractively])
        let asked = try #require(broker.calls.last)
        let failed = broker.calls[1]
        #expect(asked.timeout == .seconds(42) && asked.correlationId != failed.correlationId)
        var same = try JSONValue.parse(asked.request)["authParameters"]?.objectValue
        var sent = try JSONValue.parse(failed.request)["authParameters"]?.objectValue
        #expect(same?["authorizationType"]?.intValue == 6 && sent?["authorizationType"]?.intValue == 1)
        same?["authorizationType"] = nil
        sent?["authorizationType"] = nil
        #expect(same == sent)
    }

    @Test(arguments: [(2, false, "DISPLAY=:0"), (2, true, nil), (13, true, "DISPLAY=:0")] as [(Int, Bool, String?)])
    func otherwiseTheSilentAnswerStands(status: Int, rescue: Bool, display: String?) async throws {
        let broker = Self.broker(silentStatus: status)
        let error = await #expect(throws: AuthError.self) { _ = try await silent(broker, rescue: rescue, display: display) }
        #expect(error?.kind == .interactionRequired)
        #expect(!broker.calls.contains { $0.method == .acquireTokenInteractively })
    }
}
