import AuthSeams
import AuthTestSupport
import JSON
import Logging
import Testing
import TokenCache

@testable import AuthCore

/// Proof-of-possession through the identity broker (a fake here): `popParams` as MSALRuntime
/// fills them, the broker's signed HTTP request returned as it answered it (the broker holds
/// the key: no key of ours is made with `required`), and an answer of another kind refused.
@Suite struct BrokerPopTests {
    static let account = #"{"homeAccountId":"oid-1.tid-1","localAccountId":"oid-1","realm":"tid-1","username":"alice@contoso.com"}"#
    /// The bare PoP token (`cnf.kid`) and the broker's SHR carrying it in `at`.
    static let popToken = "eyJhbGciOiJub25lIn0." + Base64URL.encode(Array(#"{"cnf":{"kid":"broker-kid"}}"#.utf8)) + ".c2ln"
    static let shr = "eyJhbGciOiJSUzI1NiJ9." + Base64URL.encode(Array(#"{"at":"\#(popToken)","m":"POST"}"#.utf8)) + ".c2ln"

    static func answer(type: Int, token: String) -> String {
        #"{"brokerTokenResponse":{"accessToken":"\#(token)","accessTokenType":\#(type),"expiresOn":1700003600000,"grantedScopes":"User.Read","account":"#
            + account + "}}"
    }

    let cache = TokenCache(store: MemoryTokenCacheStore())

    private func app(_ mode: BrokerMode, _ broker: FakeIdentityBroker) throws -> PublicClientApplication {
        var configuration = ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common"))
        configuration.brokerMode = mode
        var dependencies = AuthDependencies(
            transport: FakeHTTPTransport { _ in HTTPResponse(status: 500, body: []) }, cache: cache, clock: ManualClock(),
            browser: UnusedBrowser(), listener: UnusedListener(), logger: Logger(label: "test"))
        dependencies.broker = broker
        return PublicClientApplication(configuration: configuration, dependencies: dependencies)
    }

    private static func broker(silent: String) -> FakeIdentityBroker {
        FakeIdentityBroker { method, _ in
            switch method {
            case .getAccounts: #"{"accounts":["# + account + "]}"
            case .acquireTokenSilently, .acquireTokenInteractively: silent
            default: "{}"
            }
        }
    }

    private func popRequest(_ application: PublicClientApplication) throws -> SilentRequest {
        var request = SilentRequest()
        request.scopes = ["User.Read"]
        request.token = .proofOfPossession(try application.popBinding())
        request.popTarget = try PopRequestTarget(
            method: "post", url: "https://pop.example.test:8443/resource/items?x=1", nonce: "n-1", clientClaims: "u=/arm/id")
        return request
    }

    @Test func popParamsAreMSALRuntimesAndTheBrokersSHRIsTheAnswer() async throws {
        let broker = Self.broker(silent: Self.answer(type: 1, token: Self.shr))
        let application = try app(.required, broker)
        let request = try popRequest(application)
        let result = try await application.acquireTokenSilently(request, correlationId: "c-1")
        #expect(result.tokenType == "pop" && result.signedHttpRequest == Self.shr && result.accessToken == Self.popToken)
        let sent = try JSONValue.parse(try #require(broker.calls.last).request)["authParameters"]?["popParams"]
        #expect(
            sent
                == [
                    "clientClaims": "u=/arm/id", "homeAccountId": "", "httpMethod": "POST", "nonce": "n-1",
                    "uriHost": "pop.example.test:8443", "uriPath": "/resource/items",
                ])
        // Never kept: every PoP request is the broker's fresh signature.
        _ = try await application.acquireTokenSilently(request, correlationId: "c-2")
        #expect(broker.calls.filter { $0.method == .acquireTokenSilently }.count == 2)
        #expect(application.cachedSilentAnswer(request, mayRead: true) == nil)
    }

    @Test func aBearerRequestCarriesNullPopParams() async throws {
        let broker = Self.broker(silent: Self.answer(type: 0, token: "bearer-at"))
        var request = SilentRequest()
        request.scopes = ["User.Read"]
        let result = try await app(.required, broker).acquireTokenSilently(request, correlationId: "c-1")
        #expect(result.tokenType == "Bearer" && result.signedHttpRequest == nil)
        #expect(try JSONValue.parse(try #require(broker.calls.last).request)["authParameters"]?["popParams"] == .null)
    }

    @Test func anAnswerOfAnotherKindIsRefused() async throws {
        let bearerToPop = try app(.required, Self.broker(silent: Self.answer(type: 0, token: "bearer-at")))
        let error = await #expect(throws: AuthError.self) {
            _ = try await bearerToPop.acquireTokenSilently(try popRequest(bearerToPop), correlationId: "c-1")
        }
        #expect(error?.kind == .malformedResponse)
        var bearer = SilentRequest()
        bearer.scopes = ["User.Read"]
        let popToBearer = try app(.required, Self.broker(silent: Self.answer(type: 1, token: Self.shr)))
        await #expect(throws: AuthError.self) { _ = try await popToBearer.acquireTokenSilently(bearer, correlationId: "c-2") }
        // A PoP answer whose SHR carries no token.
        let noToken = try app(.required, Self.broker(silent: Self.answer(type: 1, token: "opaque")))
        await #expect(throws: AuthError.self) { _ = try await noToken.acquireTokenSilently(try popRequest(noToken), correlationId: "c-3") }
    }

    @Test func theBrokerServesPopAndTheAppIdentityStillRefusesIt() throws {
        #expect(Backend.broker.serves(.proofOfPossession))
        #expect(!Backend.appIdentity.serves(.proofOfPossession) && !Backend.broker.serves(.sshCertificate))
    }
}
