import AuthSeams
import AuthTestSupport
import JSON
import JSONRPC
import SidecarTestSupport
import Synchronization
import Testing

/// The engine (framing, batches, cancellation, exactly-once, lifecycle) and the auth method
/// handlers, through a real server in this process: milliseconds, no process, no network.
@Suite(.serialized) struct InProcessServerTests {
    /// A service that only knows discovery; the token endpoint answers `token` (else tokens
    /// for the nonce the scripted browser saw).
    static func fakes(
        actions: [ScriptedBrowser.Action] = [.complete(code: "code-1")],
        token: @escaping @Sendable (HTTPRequest) -> HTTPResponse? = { _ in nil }
    ) -> InProcessServer.Fakes {
        let browser = Mutex<ScriptedBrowser?>(nil)
        let fakes = InProcessServer.Fakes(
            transport: FakeHTTPTransport { request in
                if let answer = Tokens.discoveryAnswer(for: request) { return answer }
                if let answer = token(request) { return answer }
                let nonce = browser.withLock { $0?.parameters(ofOpened: 0)["nonce"] }
                return Tokens.tokenResponse(accessToken: "at-1", nonce: nonce, audience: InProcessServer.clientId)
            }, browserActions: actions)
        browser.withLock { $0 = fakes.browser }
        return fakes
    }

    /// `initialize` as the first line of an input (id "init"; the diagnostics methods need it too).
    static let initializeLine =
        #"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"clientId":"\#(InProcessServer.clientId)","cache":{"persistence":"memory"}}}"#
        + "\n"

    /// The replies in `output` other than initialize's.
    static func replies(_ output: String) throws -> [JSONValue] {
        try messages(in: output).filter { $0["id"] != "init" }
    }

    private func server(_ fakes: InProcessServer.Fakes = fakes(), diagnostics: Bool = false) throws -> InProcessServer {
        try InProcessServer(fakes: fakes, diagnostics: diagnostics)
    }

    // MARK: the engine

    @Test func answersNDJSONInNDJSON() async throws {
        let (output, status) = try await server().exchange(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"# + "\n")
        let replies = try messages(in: output)
        #expect(replies.count == 1 && replies[0]["id"] == 1 && replies[0]["result"] != nil)
        #expect(status == 0)
    }

    @Test func answersLSPFramingInLSPFraming() async throws {
        let body = #"{"jsonrpc":"2.0","id":7,"method":"ping"}"#
        let (output, _) = try await server().exchange("Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let parts = output.split(separator: "\r\n\r\n", maxSplits: 1).map(String.init)
        #expect(parts.count == 2 && parts[0] == "Content-Length: \(parts.count == 2 ? parts[1].utf8.count : -1)")
        #expect(try JSONValue.parse(Array(parts.last?.utf8 ?? "".utf8))["id"] == 7)
    }

    @Test func answersABatchWithOneArrayWithoutTheNotifications() async throws {
        let batch =
            #"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"ping"},"#
            + #"{"jsonrpc":"2.0","id":2,"method":"noSuchMethod"}]"#
        let replies = try messages(in: try await server().exchange(batch + "\n").output)
        let members = try #require(replies.first?.arrayValue)
        #expect(replies.count == 1 && members.count == 2)
        #expect(Set(members.compactMap { $0["id"]?.intValue }) == [1, 2])
        #expect(members.first { $0["id"] == 2 }?["error"]?["code"] == -32601)
    }

    @Test func answersEveryRequestExactlyOnce() async throws {
        var input = Self.initializeLine
        for id in 0..<200 {
            switch id % 4 {
            case 0: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"ping"}"# + "\n"
            case 1: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"diagnostics/echo","params":{"n":\#(id)}}"# + "\n"
            case 2: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"acquireTokenSilent"}"# + "\n"  // nobody signed in
            default: input += #"{"jsonrpc":"2.0","id":\#(id),"method":"diagnostics/sleep","params":{"ms":1}}"# + "\n"
            }
            input += #"{"jsonrpc":"2.0","method":"ping"}"# + "\n"  // notifications get nothing
        }
        let replies = try Self.replies(try await server(diagnostics: true).exchange(input).output)
        let ids = replies.compactMap { $0["id"]?.intValue }
        #expect(replies.count == 200 && ids.count == 200 && Set(ids) == Set(0..<200))
        #expect(replies.filter { $0["error"]?["code"] == -50002 }.count == 50)
    }

    @Test func cancelsARequestInFlightWithRequestCancelled() async throws {
        let input =
            Self.initializeLine + #"{"jsonrpc":"2.0","id":1,"method":"diagnostics/sleep","params":{"ms":600000}}"# + "\n"
            + #"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"# + "\n"
        let (output, status) = try await server(diagnostics: true).exchange(input)
        let replies = try Self.replies(output)
        #expect(replies.count == 1 && replies[0]["id"] == 1 && replies[0]["error"]?["code"] == -32800)
        #expect(status == 0)
    }

    @Test func finishesRequestsInFlightAtTheEndOfInput() async throws {
        let (output, status) = try await server(diagnostics: true).exchange(
            Self.initializeLine + #"{"jsonrpc":"2.0","id":"s","method":"diagnostics/sleep","params":{"ms":20}}"# + "\n")
        let replies = try Self.replies(output)
        #expect(replies.count == 1 && replies[0]["id"] == "s" && replies[0]["result"] != nil)
        #expect(status == 0)
    }

    @Test func exitsOneOnExitWithoutShutdownAndZeroAfterIt() async throws {
        let exit = #"{"jsonrpc":"2.0","method":"exit"}"# + "\n"
        #expect(try await server().exchange(exit).status == 1)
        #expect(try await server().exchange(#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"# + "\n" + exit).status == 0)
    }

    // MARK: the auth method handlers

    @Test func refusesAuthMethodsBeforeInitialize() async throws {
        let outcome = try await server().call("acquireToken", ["scopes": ["User.Read"]])
        #expect(outcome.failure?.code == -32002)
    }

    @Test func refusesAtInitializeARedirectURIThatCannotBeServed() async throws {
        let server = try server()
        let outcome = try await server.call("initialize", ["clientId": .string(InProcessServer.clientId), "redirectUri": "http://[::1]"])
        #expect(outcome.failure?.code == -32602 && outcome.failure?.data["member"] == "redirectUri")
    }

    @Test func signsInListsServesSilentlyAndSignsOut() async throws {
        let server = try server()
        try await server.initialize()
        let token = try await server.call("acquireToken", ["scopes": ["User.Read"]]).get()
        #expect(token["accessToken"] == "at-1" && token["fromCache"] == false)
        #expect(token["account"]?["username"] == "alice@contoso.com")
        #expect(server.fakes.browser.openedURLs.count == 1)

        #expect(try await server.call("getAccounts").get()["accounts"]?.arrayValue?.count == 1)
        let silent = try await server.call("acquireTokenSilent", ["scopes": ["User.Read"]]).get()
        #expect(silent["accessToken"] == "at-1" && silent["fromCache"] == true)

        _ = try await server.call("signout").get()
        #expect(try await server.call("getAccounts").get()["accounts"]?.arrayValue?.isEmpty == true)
        #expect(try await server.call("acquireTokenSilent", ["scopes": ["User.Read"]]).failure?.code == -50002)
    }

    @Test func answersRememberedTokensWithTheirOwnIDsUntilTheyNeedRefreshing() async throws {
        let refreshes = Mutex(0)
        let server = try server(
            Self.fakes(token: { request in
                guard FakeHTTPTransport.fields(request)["grant_type"] == "refresh_token" else { return nil }
                refreshes.withLock { $0 += 1 }
                return Tokens.tokenResponse(accessToken: "at-2", refreshToken: "rt-2", audience: InProcessServer.clientId)
            }))
        try await server.initialize()
        _ = try await server.call("acquireToken", ["scopes": ["User.Read"]]).get()
        // the first finds the token and remembers it; the others are answered from memory
        for id in ["aaaa-1", "bbbb-2", "cccc-3"] {
            let silent = try await server.call("acquireTokenSilent", ["scopes": ["User.Read"], "correlationId": .string(id)]).get()
            #expect(silent["accessToken"] == "at-1" && silent["fromCache"] == true && silent["correlationId"] == .string(id))
        }
        let generated = try await server.call("acquireTokenSilent", ["scopes": ["User.Read"]]).get()["correlationId"]
        #expect(generated?.stringValue?.count == 36 && generated != "cccc-3")
        // with less than 5 minutes left, a remembered token is not served: it is refreshed
        server.fakes.clock.advance(3600 - 299)
        let refreshed = try await server.call("acquireTokenSilent", ["scopes": ["User.Read"]]).get()
        #expect(refreshed["accessToken"] == "at-2" && refreshed["fromCache"] == false)
        #expect(refreshes.withLock { $0 } == 1)
        let (output, _) = try await server.exchange(
            #"{"jsonrpc":"2.0","id":"s-1","method":"acquireTokenSilent","params":{"scopes":["User.Read"]}}"# + "\n"
                + #"{"jsonrpc":"2.0","id":2,"method":"acquireTokenSilent","params":{"scopes":["User.Read"],"forceRefresh":false}}"# + "\n"
                + #"{"jsonrpc":"2.0","id":3,"method":"acquireTokenSilent","params":{"scopes":["User.Read"],"bogus":1}}"# + "\n")
        let replies = try messages(in: output)
        #expect(replies.count == 3)
        for reply in replies where reply["id"] != 3 {
            #expect(reply["result"]?["accessToken"] == "at-2" && reply["jsonrpc"] == "2.0")
        }
        #expect(Set(replies.compactMap { $0["id"] }) == ["s-1", 2, 3])
        #expect(replies.first { $0["id"] == 3 }?["error"]?["code"] == -32602)
    }

    @Test func asksTheClientToOpenTheURLWhenTheBrowserIsTheClients() async throws {
        let server = try server()
        try await server.initialize(["browser": "client"])
        let token = try await server.call("acquireToken", ["scopes": ["User.Read"]]).get()
        #expect(token["accessToken"] == "at-1")
        let open = try #require(server.peer.openUrlRequests.first ?? nil)
        #expect(open["url"]?.stringValue?.contains("/oauth2/v2.0/authorize?") == true && open["requestId"] != nil)
    }

    @Test(arguments: [
        (ScriptedBrowser.Action.fail(error: "access_denied", subcode: "cancel"), -50005, "userCanceled"),
        (.fail(error: "access_denied", description: "AADSTS50129: register"), -50001, "workplaceJoinRequired"),
        (.fail(error: "access_denied", description: "AADB2C90118: forgot"), -51013, "passwordResetRequired"),
        (.unavailable, -51006, "browserUnavailable"),
        (.abandon, -51002, "timeout"),
    ])
    func mapsARedirectFailureToItsCode(action: ScriptedBrowser.Action, code: Int, name: String) async throws {
        let server = try server(Self.fakes(actions: [action]))
        try await server.initialize()
        let error = try #require(try await server.call("acquireToken", ["scopes": ["User.Read"]]).failure)
        #expect(error.code == code && error.data["name"] == .string(name), "\(error)")
    }

    @Test func signsInWithADeviceCodePollingInVirtualTime() async throws {
        let polls = Mutex(0)
        let fakes = Self.fakes { request in
            if request.url.hasSuffix("/devicecode") {
                return HTTPResponse(
                    status: 200,
                    body: Array(
                        #"""
                        {"device_code":"dc-1","user_code":"ABCD-EFGH","verification_uri":"https://microsoft.com/devicelogin",\#
                        "expires_in":900,"interval":5}
                        """#.utf8))
            }
            guard request.url.hasSuffix("/token") else { return nil }
            if polls.withLock({
                $0 += 1
                return $0
            }) < 3 {
                return HTTPResponse(status: 400, body: Array(#"{"error":"authorization_pending"}"#.utf8))
            }
            return Tokens.tokenResponse(accessToken: "at-dc", audience: InProcessServer.clientId)
        }
        let server = try server(fakes)
        try await server.initialize()
        let token = try await server.call("acquireToken", ["scopes": ["User.Read"], "flow": "deviceCode"]).get()
        #expect(token["accessToken"] == "at-dc")
        let notice = try #require(server.peer.notifications.first { $0.method == "deviceCode" }?.params)
        #expect(notice["userCode"] == "ABCD-EFGH" && notice["verificationUri"] == "https://microsoft.com/devicelogin")
        #expect(fakes.clock.sleeps == [.seconds(5), .seconds(5), .seconds(5)])  // three polls, no real wait
    }

    @Test(arguments: [("authorization_declined", -50005), ("access_denied", -50005), ("expired_token", -51002)])
    func mapsADeviceCodeEndingToItsCode(error: String, code: Int) async throws {
        let fakes = Self.fakes { request in
            if request.url.hasSuffix("/devicecode") {
                return HTTPResponse(
                    status: 200, body: Array(#"{"device_code":"d","user_code":"U","verification_uri":"https://v","interval":1}"#.utf8))
            }
            return request.url.hasSuffix("/token") ? HTTPResponse(status: 400, body: Array(#"{"error":"\#(error)"}"#.utf8)) : nil
        }
        let server = try server(fakes)
        try await server.initialize()
        let failure = try #require(try await server.call("acquireToken", ["scopes": ["User.Read"], "flow": "deviceCode"]).failure)
        #expect(failure.code == code && failure.data["oauthError"] == .string(error))
    }
}

extension Result {
    /// The error of a failure, `nil` for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
