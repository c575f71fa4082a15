import JSON
import JSONRPC
import Logging
import Loopback
import Sidecar
import Testing

@testable import Agent

#if canImport(Glibc)
    import Glibc
#endif

/// The ``SessionPolicy`` contract (Sources/Sidecar/Pipeline/SessionPolicy.swift), run by every
/// policy a door can name: `release` a pure function of (method, params, result), which
/// ``ReleasedReplyMemo`` relies on; `approve` refusing only what `asksConsent` names; a policy
/// that does not see replies releasing them as they are. A new policy is added to `policies`.
@Suite struct SessionPolicyConformanceTests {
    static let graph = "https://graph.microsoft.com/User.Read"

    static func policies() -> [(name: String, policy: any SessionPolicy)] {
        var agent = ConfigurationOverrides()
        agent.clientId = "11111111-2222-3333-4444-555555555555"
        agent.authority = "https://login.microsoftonline.com/organizations"
        agent.forwardScopes = [graph]
        let log = Logger(label: "conformance")
        return [
            ("open", OpenSessionPolicy()),
            ("local settings", LocalSettingsPolicy(agent: agent)),
            (
                "forward",
                ForwardSessionPolicy(
                    base: agent, startup: agent, peer: ForwardPeer(pid: getpid()), log: log, summary: LogSummary(logger: log),
                    approvals: ApprovalGate(), budget: ForwardRefreshBudget())
            ),
        ]
    }

    /// Engine answers a reply stage may see: a token within the forwarded scopes, one beyond
    /// them, an account listing, a plain object.
    static let answers: [JSONValue] = [
        ["accessToken": "at-1", "tokenType": "Bearer", "scopes": [.string(graph)], "expiresOn": 4_000_000_000, "correlationId": "c-1"],
        ["accessToken": "at-2", "tokenType": "Bearer", "scopes": [.string(graph), "Mail.Read"], "expiresOn": 4_000_000_000],
        ["accounts": [], "account": .null, "previousAccount": .null],
        ["pong": true],
    ]

    static let requests: [JSONValue?] = [nil, [:], ["scopes": [.string(graph)]], ["scopes": [.string(graph)], "forceRefresh": true]]

    /// A decision as text, to compare two (a refusal by its code and name).
    static func decided(_ body: () throws(RPCError) -> ReplyDecision) -> String {
        do {
            switch try body() {
            case .send(let value): return "send \(value.jsonText)"
            case .askAgain(let params): return "askAgain \(params?.jsonText ?? "null")"
            }
        } catch {
            return "refused \(error.code) \(error.data["name"]?.stringValue ?? "")"
        }
    }

    @Test(arguments: 0..<3) func releaseIsAFunctionOfMethodParamsAndResult(_ index: Int) {
        let (name, policy) = Self.policies()[index]
        for method in SidecarMethod.allCases {
            for request in Self.requests {
                guard let admitted = try? policy.admit(method, params: request) else { continue }
                for answer in Self.answers {
                    let first = Self.decided { () throws(RPCError) in try policy.release(method, params: admitted, result: answer) }
                    // Other replies in between, as a session sees them.
                    for other in Self.answers {
                        _ = Self.decided { () throws(RPCError) in try policy.release(method, params: admitted, result: other) }
                    }
                    let second = Self.decided { () throws(RPCError) in try policy.release(method, params: admitted, result: answer) }
                    #expect(first == second, "\(name): \(method.rawValue) released \(answer.jsonText) two ways")
                    if !policy.seesReplies { #expect(first == "send \(answer.jsonText)", "\(name) does not see replies: \(method.rawValue)") }
                }
            }
        }
    }

    @Test(arguments: 0..<3) func approveRefusesOnlyWhatAsksConsent(_ index: Int) async {
        let (name, policy) = Self.policies()[index]
        for method in SidecarMethod.allCases where !policy.asksConsent(method) {
            for request in Self.requests {
                guard let admitted = try? policy.admit(method, params: request) else { continue }
                do {
                    try await policy.approve(method, params: admitted)
                } catch {
                    Issue.record("\(name): approve refused \(method.rawValue), which asksConsent does not name: \(error.message)")
                }
            }
        }
    }
}
