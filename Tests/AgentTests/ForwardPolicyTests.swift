import AuthCore
import JSON
import Sidecar
import Testing

/// The forward socket as an attacker on the remote end would try it: every scope list that
/// names no resource, a per-request authority, a broader token cached on the laptop, no
/// `forwardScopes` at all, every method and every parameter. Nothing outside `forwardScopes`
/// may leave, and the agent's log names what did.
@Suite(.serialized) struct ForwardPolicyTests {
    /// Scope lists that name no resource: the session's default scopes, never "any token".
    static let resourceless: [JSONValue?] = [nil, [], [""], ["openid"], ["profile"], ["offline_access"], ["openid", "profile", ""]]

    @Test func noTokenBeyondForwardScopesLeavesWhateverTheScopeList() async throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        try await agent.signInOnMainSocket()
        // The laptop holds a broader token: the cache's superset lookup would find it for User.Read.
        let laptop = try agent.connect(agent.mainPath)
        let broad = try await laptop.call("acquireTokenSilent", ["scopes": ["User.Read", "Mail.Read"], "forceRefresh": true])
        #expect(broad["result"]?["accessToken"] == "at-1-Mail.Read_User.Read")
        let remote = try agent.connect(agent.forwardPath)
        _ = try await remote.call("initialize", [:])
        for scopes in Self.resourceless + [["User.Read"], ["user.read", "openid"]] {
            var params: JSONObject = [:]
            params["scopes"] = scopes
            let reply = try await remote.call("acquireTokenSilent", .object(params))
            #expect(reply["result"]?["accessToken"] == "at-1-User.Read", "scopes \(String(describing: scopes)): \(reply)")
            #expect(reply["result"]?["scopes"] == ["User.Read"])
            #expect(reply["result"]?["idToken"] == nil && reply["result"]?["account"]?["idTokenClaims"] == nil, "only the access token leaves")
            params["path"] = "/me"
            let graph = try await remote.call("callGraph", .object(params))
            #expect(graph["result"]?["status"] == 200, "callGraph with scopes \(String(describing: scopes))")
        }
        #expect(!remote.received.contains("Mail.Read"), "the broader token, or its name, crossed the forward socket")
        let handedOut = agent.log.split(separator: "\n").filter { $0.contains("token handed out through the forward socket") }
        #expect(!handedOut.isEmpty)  // summarized: once per peer and scopes a minute, repeats counted
        #expect(
            handedOut.allSatisfy { $0.lowercased().contains("scopes=user.read") && !$0.contains("Mail") },
            "the audit line names the scopes of the token that left")
    }

    @Test func aTokenWhoseClaimsGoBeyondForwardScopesIsRefused() async throws {
        let agent = try TestAgent(grants: .init(jwtScp: ["User.Read", "Mail.Read"]))
        defer { agent.stop() }
        try await agent.signInOnMainSocket()
        let remote = try agent.connect(agent.forwardPath)
        let error = try await remote.call("acquireTokenSilent", ["scopes": ["User.Read"]])["error"]
        #expect(error?["code"] == -51014 && error?["data"]?["name"] == "forwardTokenRefused")
        #expect(error?["data"]?["scopes"] == ["Mail.Read"])
        #expect(!remote.received.contains("eyJ"), "no JWT crossed")
        #expect(!agent.log.contains("token handed out through the forward socket"))
    }

    @Test func noForwardScopesMeansNoTokenForAnyScopeList() async throws {
        let agent = try TestAgent(forwardScopes: nil)
        defer { agent.stop() }
        try await agent.signInOnMainSocket()
        let remote = try agent.connect(agent.forwardPath)
        for scopes in Self.resourceless + [["User.Read"]] {
            var params: JSONObject = [:]
            params["scopes"] = scopes
            for method in ["acquireTokenSilent", "callGraph"] {
                if method == "callGraph" { params["path"] = "/me" }
                let error = try await remote.call(method, .object(params))["error"]
                #expect(error?["data"]?["name"] == "forwardScopeRefused", "\(method) \(String(describing: scopes))")
            }
        }
        #expect(!remote.received.contains("at-1"))
    }

    @Test func aPerRequestAuthorityMustBeTheAgents() async throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        try await agent.signInOnMainSocket()
        let remote = try agent.connect(agent.forwardPath)
        for method in ["acquireTokenSilent", "acquireToken"] {
            let other = try await remote.call(method, ["scopes": ["User.Read"], "authority": "https://login.microsoftonline.com/guest-tenant"])
            #expect(other["error"]?["data"]?["name"] == "forwardConfigurationRefused" && other["error"]?["data"]?["member"] == "authority")
        }
        let same = try await remote.call("acquireTokenSilent", ["scopes": ["User.Read"], "authority": "https://login.microsoftonline.com/common/"])
        #expect(same["result"]?["accessToken"] == "at-1-User.Read")
    }

    @Test func everyMethodAndParameterIsInTheTable() async throws {
        let agent = try TestAgent()
        defer { agent.stop() }
        let remote = try agent.connect(agent.forwardPath)
        _ = try await remote.call("initialize", [:])
        // Every name a request may carry anywhere in the protocol (the methods' declared
        // parameters), and one no method has.
        let everyParameter = SidecarMethod.allCases.reduce(into: Set(["noSuchParameter"])) { $0.formUnion($1.parameters) }
        var allowedMethods: [String] = []
        for method in SidecarMethod.allCases {
            let rule = ForwardPolicy.rule(method)
            if rule.access == .refused {
                let error = try await remote.call(method.rawValue, [:])["error"]
                // The diagnostics methods exist only with --enable-diagnostics, which the agent never has.
                let expected: JSONValue = method.isDiagnostic ? "methodNotFound" : "forwardMethodRefused"
                #expect(error?["data"]?["name"] == expected, "\(method)")
                continue
            }
            allowedMethods.append(method.rawValue)
            for parameter in everyParameter.subtracting(rule.parameters).sorted() {
                let error = try await remote.call(method.rawValue, .object([parameter: "x"]))["error"]
                #expect(
                    error?["data"]?["name"] == "forwardParameterRefused" && error?["data"]?["member"] == .string(parameter), "\(method) \(parameter)")
            }
        }
        // A method added to the protocol is refused on the forward socket until this list and the table name it.
        #expect(
            allowedMethods.sorted()
                == [
                    "acquireToken", "acquireTokenSilent", "callGraph", "getAccounts", "getCurrentAccount", "getDeviceInformation", "initialize",
                    "ping",
                ])
        #expect(ForwardPolicy.rule(.acquireToken).access == .needsApproval)
        #expect(!ForwardPolicy.rule(.acquireToken).parameters.contains("extraQueryParameters"))
    }

    @Test func aForwardedDeviceCodeIsShownOnTheLaptopOnly() async throws {
        let agent = try TestAgent(approval: .command(["/bin/true"]))
        defer { agent.stop() }
        let remote = try agent.connect(agent.forwardPath)
        _ = try await remote.call("initialize", [:])
        let signIn = try await remote.call("acquireToken", ["scopes": ["User.Read"], "flow": "deviceCode"])
        #expect(signIn["result"]?["accessToken"] == "at-1-User.Read", "\(signIn)")
        #expect(!remote.received.contains("UC-LAPTOP") && !remote.received.contains("deviceCode"))
        #expect(agent.log.contains("enter UC-LAPTOP"))
    }

    @Test func theApprovalQuestionIsQuotedAndNamesWhatIsAsked() {
        let question = ForwardApprovalQuestion.text(
            params: ["loginHint": "<b>mallory</b>\n\u{1B}[2JApprove!", "flow": "browser"], scopes: ["User.Read"],
            authority: "https://login.microsoftonline.com/common", command: "ssh -R x <span>evil</span> " + String(repeating: "y", count: 300),
            pid: 7)
        let lines = question.split(separator: "\n").map(String.init)
        #expect(lines[1] == #"Scopes: "User.Read""# && lines[2] == #"Authority: "https://login.microsoftonline.com/common""#)
        #expect(question.contains(#"Login hint: "&lt;b&gt;mallory&lt;/b&gt;??[2JApprove!""#))
        #expect(question.contains(#"Asked by: "ssh -R x &lt;span&gt;evil&lt;/span&gt; y"#) && question.hasSuffix("…\" (pid 7)\nAllow?"))
        #expect(!question.contains("<") && !question.unicodeScalars.contains { $0.value == 0x1B })
        #expect(lines.count == 7, "a line per part: the peer cannot add lines")
    }
}
