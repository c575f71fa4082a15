import JSON
import JSONRPC
import Testing

@testable import Sidecar

/// The forward socket's proof-of-possession opt-in (`forwardProofOfPossession`): without it the
/// table refuses `proofOfPossession` and `signHttpRequest`; with it, only for the hosts listed.
@Suite struct ForwardPopPolicyTests {
    @Test func refusedUnlessTheAgentListsHosts() {
        #expect(!ForwardPolicy.rule(.acquireTokenSilent).parameters.contains("proofOfPossession"))
        #expect(ForwardPolicy.rule(.signHttpRequest).access == .refused)
        #expect(ForwardPolicy.rule(.acquireTokenSilent, popOptIn: false) == ForwardPolicy.rule(.acquireTokenSilent))
        let silent = ForwardPolicy.rule(.acquireTokenSilent, popOptIn: true)
        #expect(silent.parameters.contains("proofOfPossession") && !silent.parameters.contains("sshCertificate"))
        let sign = ForwardPolicy.rule(.signHttpRequest, popOptIn: true)
        #expect(sign.access == .allowed && sign.usesToken)
        #expect(ForwardPolicy.rule(.signout, popOptIn: true).access == .refused)
    }

    @Test func onlyTheListedHostsAreSigned() throws {
        let hosts: Set<String> = ["management.azure.com", "127.0.0.1:8443"]
        func refused(_ method: SidecarMethod, _ params: JSONValue) -> String? {
            ForwardPolicy.popTargetRefused(method, params: params, hosts: hosts)?.data["host"]?.stringValue
        }
        #expect(refused(.signHttpRequest, ["method": "GET", "url": "https://MANAGEMENT.azure.com/x"]) == nil)
        #expect(refused(.acquireTokenSilent, ["proofOfPossession": ["method": "GET", "url": "https://127.0.0.1:8443/p"]]) == nil)
        #expect(refused(.signHttpRequest, ["method": "GET", "url": "https://graph.microsoft.com/v1.0/me"]) == "graph.microsoft.com")
        #expect(refused(.acquireTokenSilent, ["proofOfPossession": ["method": "GET", "url": "https://127.0.0.1:9/p"]]) == "127.0.0.1:9")
        // A resource id (Azure Arc's shape) is no host: never listed, always refused.
        #expect(refused(.signHttpRequest, ["resourceId": "/subscriptions/2/arc"]) == "/subscriptions/2/arc")
        #expect(refused(.acquireTokenSilent, ["scopes": ["User.Read"]]) == nil)  // no PoP asked
    }

    @Test func theKeyListsHostsOnly() throws {
        #expect(try ForwardPolicy.popHosts(["Management.Azure.com", "h:1"]) == ["management.azure.com", "h:1"])
        for bad in ["https://a", "a/b", "*.azure.com", "", "a b"] {
            #expect(throws: RPCError.self) { _ = try ForwardPolicy.popHosts([bad]) }
        }
    }
}
