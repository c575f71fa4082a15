import JSON
import JSONRPC
import Sidecar
import Testing

/// The typed requests (``RequestType``): decoded once at the edge with the edge's per-member
/// errors, their params what a client sends, their parameter names the ones the method table
/// allows (``SidecarMethod/parameters``, written once).
@Suite("Typed requests: one declaration per method")
struct TypedRequestTests {
    private func invalid<Request: RequestType>(_ type: Request.Type, _ params: JSONValue) -> RPCError? {
        do {
            _ = try Request(decoding: params)
            return nil
        } catch { return error }
    }

    @Test("an unknown member is -32602 with a did-you-mean, a bad one names its dotted path")
    func edgeErrors() {
        let misspelt = invalid(AcquireTokenSilentRequest.self, ["scope": ["a"]])
        #expect(misspelt?.code == -32602)
        #expect(misspelt?.message.contains("unknown member 'scope' (did you mean 'scopes'?)") == true)
        let nested = invalid(AcquireTokenSilentRequest.self, ["account": ["homeAccountId": 3]])
        #expect(nested?.message.contains("'account.homeAccountId' must be a string") == true)
        let deviceCode = invalid(AcquireTokenRequest.self, ["flow": "deviceCode", "loginHint": "u"])
        #expect(deviceCode?.message.contains("'loginHint' does not apply to the device code flow") == true)
        let twoKinds = invalid(
            AcquireTokenSilentRequest.self,
            ["proofOfPossession": ["method": "GET", "url": "https://x.example/"], "sshCertificate": ["publicKey": "k"]])
        #expect(twoKinds?.message.contains("ask for one") == true)
        #expect(invalid(SetCurrentAccountRequest.self, [:])?.message.contains("missing member 'account'") == true)
    }

    @Test("what a client sends decodes to the same request")
    func roundTrip() throws {
        var silent = AcquireTokenSilentRequest(scopes: ["https://x.example/.default"], account: .username("a@b.example"))
        silent.forceRefresh = true
        silent.claims = "{}"
        silent.proofOfPossession = PopTargetParams(method: "GET", url: "https://x.example/r", nonce: "n")
        #expect(try AcquireTokenSilentRequest(decoding: silent.params).params == silent.params)
        silent.proofOfPossession = PopTargetParams(resourceId: "/subscriptions/s/resourceGroups/g", clientClaims: "{\"u\":\"x\"}")
        #expect(try AcquireTokenSilentRequest(decoding: silent.params).params == silent.params)
        #expect(try AcquireTokenSilentRequest(decoding: silent.params).proofOfPossession?.target?.resourceId == "/subscriptions/s/resourceGroups/g")
        var signIn = AcquireTokenRequest(flow: .paste, scopes: ["s"])
        signIn.loginHint = "a@b.example"
        signIn.extraQueryParameters = [("b", "2"), ("a", "1")]
        #expect(try AcquireTokenRequest(decoding: signIn.params).params == signIn.params)
        let signout = SignoutRequest(account: .homeAccountId("u.t"), signoutFromBrowser: true)
        #expect(try SignoutRequest(decoding: signout.params).account == .homeAccountId("u.t"))
        #expect(try GetAccountsRequest(decoding: GetAccountsRequest(username: "x").params).username == "x")
    }

    @Test("each typed method's allowed members are its request type's")
    func parametersWrittenOnce() {
        for method in SidecarMethod.allCases where method != .diagnosticsEcho {
            #expect(method.requestType?.method == method.rawValue, "\(method)")
            #expect(method.requestType?.parameters == method.parameters, "\(method)")
        }
        #expect(SidecarMethod.acquireTokenSilent.parameters == AcquireTokenSilentRequest.parameters)
        #expect(SidecarMethod.acquireToken.parameters == AcquireTokenRequest.parameters)
        #expect(SidecarMethod.signout.parameters == SignoutRequest.parameters)
        #expect(SidecarMethod.getAccounts.parameters == GetAccountsRequest.parameters)
        #expect(SidecarMethod(rawValue: AcquireTokenSilentRequest.method) == .acquireTokenSilent)
    }

    @Test("a result without the member its type needs is an error naming it, not a token of nothing")
    func malformedResult() {
        #expect(throws: RPCError.self) { try TokenResponse(decoding: ["expiresOn": 1]) }
        #expect(throws: RPCError.self) { try AccountsResponse(decoding: [:]) }
    }
}
