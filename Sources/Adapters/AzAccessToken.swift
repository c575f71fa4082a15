import JSON

/// The JSON `az account get-access-token` prints, which scripts and the Azure SDKs'
/// `AzureCliCredential` parse: `accessToken`, `expiresOn` (local time,
/// `YYYY-MM-DD HH:MM:SS.ffffff`), `expires_on` (Unix seconds), `tenant`, `tokenType`, and
/// `subscription` when one is configured.
public enum AzAccessToken {
    /// `--resource R` means the scope `R/.default`, as in az.
    public static func scope(forResource resource: String) -> String {
        (resource.hasSuffix("/") ? String(resource.dropLast()) : resource) + "/.default"
    }

    public static func json(
        accessToken: String, expiresOn: Int64, tenant: String, tokenType: String,
        subscription: String?
    ) -> JSONValue {
        var object: JSONObject = [
            "accessToken": .string(accessToken), "expiresOn": .string(localTime(expiresOn)),
            "expires_on": .int(expiresOn), "tenant": .string(tenant), "tokenType": .string(tokenType),
        ]
        if let subscription { object["subscription"] = .string(subscription) }
        return .object(object)
    }

    /// Unix seconds as local time, the way az prints them.
    package static func localTime(_ seconds: Int64) -> String {
        TimeText.format(seconds, "%Y-%m-%d %H:%M:%S", local: true) + ".000000"
    }
}
