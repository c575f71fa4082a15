import JSON

/// `az version`: Azure CLI's shape (azure-cli's `show_version`: the CLI, its core and
/// telemetry modules, its extensions) with the Azure CLI version whose output the shim
/// reproduces, so a caller that checks a minimum version (Terraform's azurerm provider)
/// accepts it, and `servedBy`, naming what answered (sorted after Azure CLI's own members, so
/// their tsv columns and table columns stay where az puts them).
public enum AzVersion {
    /// The Azure CLI release whose output the shim was compared with.
    public static let azureCLI = "2.91.0"
    /// That release's telemetry module.
    public static let telemetry = "1.1.0"

    /// The result, `auth-sidecar VERSION` as `servedBy`.
    public static func result(sidecarVersion: String) -> JSONValue {
        [
            "azure-cli": .string(azureCLI), "azure-cli-core": .string(azureCLI), "azure-cli-telemetry": .string(telemetry),
            "extensions": [:], "servedBy": .string("auth-sidecar \(sidecarVersion)"),
        ]
    }
}
