/// Resource Manager's endpoint per cloud, where Azure CLI lists tenants and subscriptions
/// (azure-cli's `cloud.py`, `endpoints.resource_manager`).
extension AzCloud {
    /// The cloud's Resource Manager base URL, ending in `/`.
    public var armEndpoint: String {
        switch name {
        case AzCloud.china.name: "https://management.chinacloudapi.cn/"
        case AzCloud.usGovernment.name: "https://management.usgovcloudapi.net/"
        default: "https://management.azure.com/"
        }
    }

    /// The Resource Manager base URL the shim lists subscriptions at: `configured` (the
    /// `armEndpoint` key, a `/` added when missing), else the cloud's when the authority's
    /// host is a known cloud's sign-in host; nil otherwise (another identity service: its
    /// accounts stay tenant-level, as before subscriptions were kept).
    public static func resourceManager(configured: String?, authority: String) -> String? {
        if let configured, !configured.isEmpty { return configured.hasSuffix("/") ? configured : configured + "/" }
        let host = host(ofAuthority: authority)
        return [azurePublic, china, usGovernment].first { $0.loginHosts.contains(host) }?.armEndpoint
    }
}
