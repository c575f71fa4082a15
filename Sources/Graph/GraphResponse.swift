import JSON

/// Graph's answer, whatever its status (a 4xx is a result, not an error).
public struct GraphResponse: Sendable {
    public var status: Int
    /// Lower-case names; repeated headers joined with ", ".
    public var headers: JSONObject
    /// Parsed JSON when the answer is JSON, else the text, `null` when empty.
    public var body: JSONValue
    /// Pages fetched (1 unless `allPages`).
    public var pages: Int

    public var json: JSONValue {
        ["status": .int(Int64(status)), "headers": .object(headers), "body": body]
    }
}
