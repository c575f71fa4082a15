import JSON

#if canImport(Glibc)
    import Glibc
#endif

/// kubectl's exec credential plugin protocol (client.authentication.k8s.io): the
/// `ExecCredential` printed on stdout, in the API version `KUBERNETES_EXEC_INFO` asks for.
public enum ExecCredential {
    /// AKS's server application (Entra ID integrated clusters).
    public static let aksScope = "6dae42f8-4368-4678-94ff-3960e28e3630/.default"
    public static let versions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]

    /// What kubectl said about the call.
    public struct ExecInfo: Sendable, Equatable {
        public var apiVersion = versions[0]
        /// Whether the plugin may talk to the user (stdin is a terminal kubectl shares).
        public var interactive = false
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case malformed
        case unsupportedVersion(String)

        public var description: String {
            switch self {
            case .malformed: "KUBERNETES_EXEC_INFO is not an ExecCredential JSON object"
            case .unsupportedVersion(let version): "unsupported apiVersion \(version) (supported: \(versions.joined(separator: ", ")))"
            }
        }
    }

    /// Reads `KUBERNETES_EXEC_INFO` (absent: v1, not interactive).
    public static func execInfo(_ environment: String?) throws(Failure) -> ExecInfo {
        guard let environment, !environment.isEmpty else { return ExecInfo() }
        guard let json = try? JSONValue.parse(Array(environment.utf8)), json.objectValue != nil else { throw .malformed }
        var info = ExecInfo()
        if let version = json["apiVersion"]?.stringValue {
            guard versions.contains(version) else { throw .unsupportedVersion(version) }
            info.apiVersion = version
        }
        info.interactive = json["spec"]?["interactive"]?.boolValue ?? false
        return info
    }

    /// The credential: the token and its expiry as RFC 3339 UTC.
    public static func json(token: String, expiresOn: Int64, apiVersion: String) -> JSONValue {
        [
            "apiVersion": .string(apiVersion), "kind": "ExecCredential",
            "status": ["token": .string(token), "expirationTimestamp": .string(TimeText.rfc3339(expiresOn))],
        ]
    }
}

/// Unix seconds formatted by `strftime`, in UTC or local time.
public enum TimeText {
    public static func format(_ seconds: Int64, _ pattern: String, local: Bool) -> String {
        var time = time_t(seconds)
        var parts = tm()
        if local { localtime_r(&time, &parts) } else { gmtime_r(&time, &parts) }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, pattern, &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// RFC 3339 in UTC: `YYYY-MM-DDTHH:MM:SSZ`.
    public static func rfc3339(_ seconds: Int64) -> String { format(seconds, "%Y-%m-%dT%H:%M:%SZ", local: false) }
}
