import FoundationEssentials
import JSON

/// The claims of a JWT, read without checking its signature: for a token the engine already
/// validated (an ID token's `exp`, to say when a credential expires).
public enum JWTClaims {
    /// The payload (second part) as a JSON object; `nil` when it is not base64url JSON.
    public static func payload(_ jwt: String) -> JSONValue? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var standard = String(parts[1].map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let bytes = Data(base64Encoded: standard), let json = try? JSONValue.parse(Array(bytes)),
            json.objectValue != nil
        else { return nil }
        return json
    }

    /// The `exp` claim (Unix seconds).
    public static func expiry(_ jwt: String) -> Int64? {
        payload(jwt)?["exp"]?.intValue
    }
}
