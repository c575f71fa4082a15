import AuthSeams
import AuthTestSupport
import JSON
import Logging
import Testing
import TokenCache

@testable import AuthCore

/// With `brokerMode` other than `off`, the application's calls go to the identity broker
/// (a fake here): no HTTP request, nothing written to the cache, the broker's errors as
/// ``AuthError``s; `auto` without a broker takes the usual flows, `required` fails.
@Suite struct BrokerRoutingTests {
    static let account = #"{"homeAccountId":"oid-1.tid-1","localAccountId":"oid-1","realm":"tid-1","username":"alice@contoso.com"}"#
    static let token =
        #"{"brokerTokenResponse":{"accessToken":"broker-at","accessTokenType":0,"expiresOn":1700003600000,"grantedScopes":["User.Read"],"account":"#
        + account + "}}"

    let http = FakeHTTPTransport { _ in HTTPResponse(status: 500, body: []) }
    let cache = TokenCache(store: MemoryTokenCacheStore())

    private func app(_ mode: BrokerMode, _ broker: FakeIdentityBroker?, clock: ManualClock = ManualClock()) throws -> PublicClientApplication {
        var configuration = ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common"))
        configuration.brokerMode = mode
        configuration.brokerTimeout = .seconds(7)
        var dependencies = AuthDependencies(
            transport: http, cache: cache, clock: clock, browser: UnusedBrowser(), listener: UnusedListener(),
            logger: Logger(label: "test"))
        dependencies.broker = broker
        return PublicClientApplication(configuration: configuration, dependencies: dependencies)
    }

    private static func signedIn(_ failSilent: String? = nil) -> FakeIdentityBroker {
        FakeIdentityBroker { method, _ in
            switch method {
            case .getAccounts: #"{"accounts":["# + account + "]}"
            case .acquireTokenSilently: failSilent ?? token
            case .acquireTokenInteractively: token
            case .removeAccount: "{}"
            case .getLinuxBrokerVersion: #"{"linuxBrokerVersion":"2.0.4"}"#
            case .cancelInteractiveFlow: "{}"
            }
        }
    }

    private static func request(_ call: FakeIdentityBroker.Call) throws -> JSONValue {
        try JSONValue.parse(call.request)
    }

    @Test func silentGoesToTheBrokerWithClaimsAndNoNetworkOrCacheWrite() async throws {
        let broker = Self.signedIn()
        let application = try app(.auto, broker)
        var request = SilentRequest()
        request.scopes = ["User.Read"]
        request.claims = #"{"access_token":{"acrs":{"essential":true}}}"#
        let result = try await application.acquireTokenSilently(request, correlationId: "c-1")
        #expect(result.accessToken == "broker-at" && result.expiresOn == 1_700_003_600 && result.account.username == "alice@contoso.com")
        #expect(broker.calls.map(\.method) == [.getAccounts, .acquireTokenSilently])
        let silent = try #require(broker.calls.last)
        #expect(silent.correlationId == "c-1" && silent.timeout == .seconds(7))
        let parameters = try Self.request(silent)["authParameters"]
        #expect(parameters?["authorizationType"]?.intValue == 1)
        #expect(parameters?["clientId"]?.stringValue == "client")
        #expect(parameters?["redirectUri"]?.stringValue == BrokerInterface.redirectURI)
        #expect(parameters?["decodedClaims"]?.stringValue == request.claims)
        #expect(parameters?["username"]?.stringValue == "alice@contoso.com")
        #expect(http.requests.isEmpty)
        #expect(try cache.read { $0.inventory(clientId: "client") }.accessTokens.isEmpty)
        #expect(application.cachedSilentAnswer(request) == nil)
    }

    @Test func aTokenIsKeptInMemoryUntilCloseToItsExpiry() async throws {
        let broker = Self.signedIn()
        let clock = ManualClock()
        let application = try app(.auto, broker, clock: clock)
        var request = SilentRequest()
        request.scopes = ["User.Read"]
        _ = try await application.acquireTokenSilently(request, correlationId: "c-1")
        let again = try await application.acquireTokenSilently(request, correlationId: "c-2")
        #expect(again.fromCache && again.correlationId == "c-2" && again.accessToken == "broker-at")
        #expect(broker.calls.count == 2)  // getAccounts, acquireTokenSilently: the second from memory
        clock.advance(3600 - 299)
        _ = try await application.acquireTokenSilently(request, correlationId: "c-3")
        #expect(broker.calls.count == 4)
    }

    @Test func theReaderAnswersWithBlockingCallsOnlyWhenIdleThenFromMemory() async throws {
        let broker = Self.signedIn()
        let application = try app(.auto, broker)
        var request = SilentRequest()
        request.scopes = ["User.Read"]
        #expect(application.cachedSilentAnswer(request, mayRead: false) == nil)
        #expect(broker.calls.isEmpty)
        let answer = try #require(application.cachedSilentAnswer(request, mayRead: true))
        let first = answer.result("c-1")
        #expect(first.accessToken == "broker-at" && first.correlationId == "c-1" && !first.fromCache)
        #expect(broker.calls.map(\.method) == [.getAccounts, .acquireTokenSilently] && broker.calls.allSatisfy { $0.timeout == .seconds(7) })
        let kept = try #require(application.cachedSilentAnswer(request, mayRead: false))
        #expect(kept.result("c-2").fromCache && kept.identity != answer.identity)
        #expect(broker.calls.count == 2)
        #expect(http.requests.isEmpty)
    }

    @Test func forceRefreshShowsTheBrokerTheTokenToRenew() async throws {
        let broker = Self.signedIn()
        var request = SilentRequest()
        request.forceRefresh = true
        _ = try await app(.required, broker).acquireTokenSilently(request, correlationId: "c-2")
        #expect(broker.calls.map(\.method) == [.getAccounts, .acquireTokenSilently, .acquireTokenSilently])
        let renewal = try Self.request(try #require(broker.calls.last))["authParameters"]
        #expect(renewal?["accessTokenToRenew"]?.stringValue == "broker-at")
        #expect(Set(broker.calls.map(\.correlationId)).count == 3)
    }

    @Test func interactiveHasNoTimeLimitAndAccountsAndSignOutUseTheBroker() async throws {
        let broker = Self.signedIn()
        let application = try app(.auto, broker)
        var interactive = InteractiveRequest()
        interactive.prompt = .selectAccount
        let signedIn = try await application.acquireTokenInteractively(interactive, correlationId: "c-3")
        #expect(signedIn.accessToken == "broker-at")
        let call = try #require(broker.calls.first { $0.method == .acquireTokenInteractively })
        // No display in this configuration (nobody may see the window): interactiveTimeout.
        #expect(call.timeout == .seconds(600))
        #expect(try Self.request(call)["authParameters"]?["authorizationType"]?.intValue == 6)
        #expect(try Self.request(call)["authParameters"]?["prompt"]?.stringValue == "select_account")
        #expect(try await application.accounts().map(\.username) == ["alice@contoso.com"])
        #expect(try await application.currentAccount().current?.homeAccountId == "oid-1.tid-1")
        let removed = try await application.signOut(nil, fromBrowser: false)
        #expect(removed.account.homeAccountId == "oid-1.tid-1" && removed.browserSignOut == nil)
        #expect(broker.calls.contains { $0.method == .removeAccount })
        #expect(await application.brokerInformation()?.version == "2.0.4")
        #expect(http.requests.isEmpty)
    }

    @Test func brokerErrorsBecomeAuthErrors() async throws {
        let answers: [(String, AuthError.Kind)] = [
            (#"{"brokerTokenResponse":{"error":{"status":2,"context":"AADSTS53000"}}}"#, .interactionRequired),
            (#"{"error":{"status":"NoNetwork","context":"offline"}}"#, .networkError),
            (#"{"brokerTokenResponse":{"error":{"status":7}}}"#, .userCanceled),
            ("not json", .malformedResponse),
        ]
        for (answer, kind) in answers {
            let application = try app(.auto, Self.signedIn(answer))
            await #expect(throws: AuthError.self) {
                do { _ = try await application.acquireTokenSilently(SilentRequest(), correlationId: "c") } catch let error as AuthError {
                    #expect(error.kind == kind, "\(answer)")
                    throw error
                }
            }
        }
        let timedOut = FakeIdentityBroker { _, _ throws(BrokerCallError) in throw .timedOut(.seconds(7)) }
        await #expect(throws: AuthError(.timeout, "no answer from the identity broker to getAccounts within 7 s")) {
            _ = try await app(.auto, timedOut).accounts()
        }
    }

    @Test func answersWithoutAccountAndGrantedScopesAsAString() async throws {
        let clientInfo = "eyJ1aWQiOiJvaWQtMSIsInV0aWQiOiJ0aWQtMSJ9"  // {"uid":"oid-1","utid":"tid-1"}
        let idToken = "e30.eyJvaWQiOiJvaWQtMSIsInRpZCI6InRpZC0xIiwicHJlZmVycmVkX3VzZXJuYW1lIjoiYWxpY2VAY29udG9zby5jb20ifQ.sig"
        let bare =
            #"{"brokerTokenResponse":{"accessToken":"at-2","expiresOn":1700003600000,"grantedScopes":"User.Read Mail.Read","clientInfo":""#
            + clientInfo + #"","idToken":""# + idToken + #""}}"#
        let broker = FakeIdentityBroker { method, _ in
            method == .getAccounts ? #"{"accounts":[]}"# : bare
        }
        let result = try await app(.required, broker).acquireTokenInteractively(InteractiveRequest(), correlationId: "c")
        #expect(result.account.homeAccountId == "oid-1.tid-1" && result.account.username == "alice@contoso.com")
        #expect(result.scopes == ["User.Read", "Mail.Read"])
        let sent = try Self.request(try #require(broker.calls.last))["authParameters"]
        #expect(sent?["additionalQueryParametersForAuthorization"]?.objectValue != nil && sent?["isSignIn"] == true)
    }

    @Test func statusesAndTheErrorsDataAreKept() async throws {
        let answers: [(Int, AuthError.Kind)] = [
            (18, .interactionRequired), (19, .brokerUnavailable), (20, .workplaceJoinRequired), (21, .brokerUnavailable),
        ]
        for (status, kind) in answers {
            let answer =
                #"{"brokerTokenResponse":{"error":{"context":"AADSTS50097: device auth. suberror: bad_token","tag":508,"errorCode":5,"status":"#
                + "\(status)" + #","subStatus":0,"diagnostics":{}}}}"#
            let application = try app(.required, Self.signedIn(answer))
            await #expect(throws: AuthError.self) {
                do { _ = try await application.acquireTokenSilently(SilentRequest(), correlationId: "c") } catch let error as AuthError {
                    #expect(error.kind == kind && error.brokerStatus == status && error.brokerTag == 508, "\(status)")
                    #expect(error.errorCodes == [50097] && error.suberror == "bad_token" && error.brokerErrorCode == 5)
                    throw error
                }
            }
        }
    }

    @Test func autoWithoutABrokerTakesTheUsualFlowsAndAsksOnce() async throws {
        let broker = FakeIdentityBroker(unavailable: .unavailable("not on the bus")) { _, _ in "{}" }
        let application = try app(.auto, broker)
        #expect(try await application.accounts().isEmpty)  // the (empty) cache, after the broker was not there
        #expect(try await application.accounts().isEmpty)
        #expect(broker.calls.map(\.method) == [.getAccounts])  // asked once, by the first call
        #expect(await application.brokerInformation()?.available == false)
        #expect(broker.calls.count == 1)
    }

    @Test func requiredWithoutABrokerFailsNamingIt() async throws {
        let gone = FakeIdentityBroker(unavailable: .unavailable("no session bus")) { _, _ in "{}" }
        for application in [try app(.required, gone), try app(.required, nil)] {
            await #expect(throws: AuthError.self) {
                do { _ = try await application.acquireTokenSilently(SilentRequest(), correlationId: "c") } catch let error as AuthError {
                    #expect(error.kind == .brokerUnavailable && error.message.contains(BrokerInterface.busName))
                    throw error
                }
            }
        }
    }

    @Test func offNeverAsksTheBroker() async throws {
        let broker = Self.signedIn()
        let application = try app(.off, broker)
        #expect(try await application.accounts().isEmpty)
        #expect(await application.brokerInformation() == nil)
        #expect(broker.calls.isEmpty)
    }
}
