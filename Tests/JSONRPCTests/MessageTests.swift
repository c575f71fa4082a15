import JSON
import Testing

@testable import JSONRPC

@Suite struct IncomingMessageTests {
    private func classify(_ text: String) throws -> IncomingMessage {
        IncomingMessage(try JSONValue.parse(text))
    }

    @Test func classifiesRequestsAndNotifications() throws {
        #expect(
            try classify(#"{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":1}}"#)
                == .request(id: .string("a"), method: "m", params: ["x": 1]))
        #expect(try classify(#"{"jsonrpc":"2.0","id":null,"method":"m"}"#) == .request(id: .null, method: "m", params: nil))
        #expect(try classify(#"{"jsonrpc":"2.0","method":"n","params":[1]}"#) == .notification(method: "n", params: [1]))
    }

    @Test func nullParamsMeanNoParams() throws {
        #expect(
            try classify(#"{"jsonrpc":"2.0","id":1,"method":"shutdown","params":null}"#)
                == .request(id: .number(1), method: "shutdown", params: nil))
        #expect(try classify(#"{"jsonrpc":"2.0","method":"exit","params":null}"#) == .notification(method: "exit", params: nil))
    }

    /// The -32600 for a scalar `params` asks for what `Params` then accepts (an object), so
    /// a client that follows it is not rejected next for sending an array.
    @Test func scalarParamsMessageAgreesWithParamsChecking() throws {
        guard case .invalid(_, let error) = try classify(#"{"jsonrpc":"2.0","id":1,"method":"m","params":5}"#) else {
            Issue.record("expected invalid")
            return
        }
        #expect(error.message.contains("an object of named members"))
        #expect(!error.message.contains("array"))
        do {
            _ = try Params([1], allowed: [])
            Issue.record("an array was accepted")
        } catch {
            #expect(error.message.contains("an object of named members"))
        }
    }

    @Test func classifiesRepliesToServerRequests() throws {
        #expect(
            try classify(#"{"jsonrpc":"2.0","id":"sidecar-1","result":{}}"#)
                == .response(id: .string("sidecar-1"), outcome: .success([:])))
    }

    @Test(arguments: [
        (#"{"id":1,"method":"m"}"#, RequestID.number(1)),
        (#"{"jsonrpc":"1.0","id":"x","method":"m"}"#, .string("x")),
        (#"{"jsonrpc":"2.0","id":2,"method":5}"#, .number(2)),
        (#"{"jsonrpc":"2.0","id":3,"method":"m","params":"p"}"#, .number(3)),
        (#"{"jsonrpc":"2.0","id":{},"method":"m"}"#, .null),
        (#"1"#, .null),
    ])
    func rejectsInvalidRequestsKeepingAValidID(text: String, expectedID: RequestID) throws {
        guard case .invalid(let id, let error) = try classify(text) else {
            Issue.record("expected invalid for \(text)")
            return
        }
        #expect(id == expectedID)
        #expect(error.code == -32600)
    }
}

@Suite struct ParamsTests {
    @Test func readsTypedMembers() throws {
        let params = try Params(["s": "x", "b": true, "n": 3, "list": ["a"], "nothing": nil], allowed: ["s", "b", "n", "list", "nothing", "absent"])
        #expect(try params.required("s", as: String.self) == "x")
        #expect(try params.optional("b", as: Bool.self) == true)
        #expect(try params.optional("n", as: Int.self) == 3)
        #expect(try params.optional("list", as: [String].self) == ["a"])
        #expect(try params.optional("nothing", as: String.self) == nil)
        #expect(try params.optional("absent", as: String.self) == nil)
    }

    @Test func namesTheMemberInEveryError() throws {
        #expect(memberOfError { _ = try Params(["scope": 1], allowed: ["scopes"]) } == "scope")
        #expect(memberOfError { _ = try Params(["scopes": "x"], allowed: ["scopes"]).optional("scopes", as: [String].self) } == "scopes")
        #expect(memberOfError { _ = try Params([:], allowed: ["clientId"]).required("clientId", as: String.self) } == "clientId")
        #expect(
            memberOfError {
                _ = try Params(["account": ["user": "x"]], allowed: ["account"]).nested("account", allowed: ["username"])
            } == "account.user")
        #expect(memberOfError { _ = try Params(["p": "z"], allowed: ["p"]).optional("p", oneOf: ["a", "b"]) } == "p")
    }

    @Test func rejectsPositionalParams() {
        #expect(throws: RPCError.self) { try Params([1, 2], allowed: []) }
    }

    private func memberOfError(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as RPCError {
            #expect(error.code == -32602)
            return error.data["member"]?.stringValue
        } catch {
            return nil
        }
    }
}

@Suite struct NearestNameTests {
    @Test func suggestsTheKeyATypoMeant() throws {
        let keys: Set<String> = ["clientId", "authority", "cache", "cacheProtection", "scopes"]
        #expect(NearestName.suggestion(for: "clientid", among: keys) == "clientId")
        #expect(NearestName.suggestion(for: "authorty", among: keys) == "authority")
        #expect(NearestName.suggestion(for: "scope", among: keys) == "scopes")
        #expect(NearestName.suggestion(for: "cacheProtecton", among: keys) == "cacheProtection")
        // Nothing close, or too short to judge: no guess.
        #expect(NearestName.suggestion(for: "browserCommand", among: keys) == nil)
        #expect(NearestName.suggestion(for: "x", among: keys) == nil)
    }

    @Test func unknownMemberErrorSaysWhatWasMeant() throws {
        do {
            _ = try Params(["clientid": "abc"], allowed: ["clientId", "authority"])
            Issue.record("a mistyped key was accepted")
        } catch {
            #expect(error.message.contains("unknown member 'clientid' (did you mean 'clientId'?)"))
            #expect(error.data["member"]?.stringValue == "clientid")
        }
    }
}
