import Adapters
import JSON

extension AzShim {
    /// `account show` when the engine signs in as an app (its configuration has a
    /// `clientAssertion`): the service principal, its tenant the configured authority's;
    /// `nil` for a user's sign-in.
    static func servicePrincipalShow(_ subscription: String?, _ output: AzOutputOptions, _ session: any AzEngine) throws(Failure) -> String? {
        let configuration = try session.configuration()
        guard configuration["clientAssertion"] != nil, let clientId = configuration["clientId"]?.stringValue,
            let authority = configuration["authority"]?.stringValue
        else { return nil }
        let tenantId = authority.split(separator: "/").last.map(String.init) ?? ""
        if let subscription, !AzResults.names(subscription, tenantId: tenantId) {
            throw Failure(message: AzResults.subscriptionNotFound(subscription))
        }
        let shown = AzResults.servicePrincipalAccount(clientId: clientId, tenantId: tenantId, cloud: AzCloud.forAuthority(authority))
        return AzOutput.render(shown, output)
    }
}
