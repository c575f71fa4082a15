/// The Azure clouds as Azure CLI names them (`environmentName`), told apart by the authority's
/// host, with the resources `--resource-type` names and Resource Manager, the default
/// resource (azure-cli's `cloud.py`, `AZURE_PUBLIC_CLOUD` and the sovereign clouds).
public struct AzCloud: Equatable, Sendable {
    /// `--resource-type`'s choices (azure-cli's `cloud_resource_type_mappings`).
    public enum ResourceType: String, CaseIterable, Sendable {
        // In az's order, which its refusal of another value lists.
        case ossRdbms = "oss-rdbms"
        case arm
        case aadGraph = "aad-graph"
        case msGraph = "ms-graph"
        case batch
        case media
        case dataLake = "data-lake"
    }

    public let name: String
    let resources: [ResourceType: String]

    /// The resource of a `--resource-type`; nil when the cloud has none (az then falls back
    /// to Resource Manager).
    public func resource(_ type: ResourceType) -> String? { resources[type] }

    /// Resource Manager, what az asks for without `--resource` or `--scope`.
    public var armResource: String { resources[.arm] ?? "https://management.core.windows.net/" }

    /// The cloud of an authority URL (`https://login.microsoftonline.com/common`); Azure
    /// public for any host that is not a sovereign cloud's (a test service included).
    public static func forAuthority(_ authority: String) -> AzCloud {
        let host = host(ofAuthority: authority)
        return [china, usGovernment].first { $0.loginHosts.contains(host) } ?? azurePublic
    }

    /// The lower-cased host of an authority URL.
    static func host(ofAuthority authority: String) -> String {
        let afterScheme = authority.firstRange(of: "://").map { authority[$0.upperBound...] } ?? authority[...]
        return afterScheme.prefix { $0 != "/" && $0 != ":" }.lowercased()
    }

    let loginHosts: Set<String>

    static let azurePublic = AzCloud(
        name: "AzureCloud",
        resources: [
            .arm: "https://management.core.windows.net/", .aadGraph: "https://graph.windows.net/",
            .msGraph: "https://graph.microsoft.com/", .batch: "https://batch.core.windows.net/",
            .dataLake: "https://datalake.azure.net/", .media: "https://rest.media.azure.net",
            .ossRdbms: "https://ossrdbms-aad.database.windows.net",
        ], loginHosts: ["login.microsoftonline.com"])

    static let china = AzCloud(
        name: "AzureChinaCloud",
        resources: [
            .arm: "https://management.core.chinacloudapi.cn/", .aadGraph: "https://graph.chinacloudapi.cn/",
            .msGraph: "https://microsoftgraph.chinacloudapi.cn", .batch: "https://batch.chinacloudapi.cn/",
            .media: "https://rest.media.chinacloudapi.cn", .ossRdbms: "https://ossrdbms-aad.database.chinacloudapi.cn",
        ], loginHosts: ["login.chinacloudapi.cn", "login.partner.microsoftonline.cn"])

    static let usGovernment = AzCloud(
        name: "AzureUSGovernment",
        resources: [
            .arm: "https://management.core.usgovcloudapi.net/", .aadGraph: "https://graph.microsoftazure.us/",
            .msGraph: "https://graph.microsoft.us/", .batch: "https://batch.core.usgovcloudapi.net/",
            .media: "https://rest.media.usgovcloudapi.net", .ossRdbms: "https://ossrdbms-aad.database.usgovcloudapi.net",
        ], loginHosts: ["login.microsoftonline.us"])
}
