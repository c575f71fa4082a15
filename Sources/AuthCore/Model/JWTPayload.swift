import JSON

/// The claims of a JWT read without checking its signature: for a token this process did not
/// validate and does not trust for who it names, only for what it says it is for (an access
/// token's `aud`, `scp` and `roles`, before it leaves through a door that limits them). The
/// segments are found on the token's bytes as ``IDToken`` finds them.
public enum JWTPayload {
    /// The payload of `token` as a JSON object; `nil` for an opaque token (not two or three
    /// dot-separated segments, or a payload that is not base64url JSON of an object).
    public static func claims(of token: String) -> JSONObject? {
        guard let payload = try? IDToken.segments(of: token).payload, let bytes = Base64URL.decode(payload) else { return nil }
        return (try? JSONValue.parse(bytes))?.objectValue
    }
}
