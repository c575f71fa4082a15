import JSON

/// An ID token (a JWT): its header, claims and signature. ``IDTokenValidator`` checks it
/// before anything is cached.
public struct IDToken: Sendable, Equatable {
    public let raw: String
    public let header: JSONObject
    public let claims: JSONObject
    /// `header.payload`, the bytes the signature covers.
    public let signingInput: String
    /// The signature bytes (empty for an unsigned token).
    public let signature: [UInt8]

    public init(raw: String) throws(AuthError) {
        // Split on the bytes: splitting on Characters (grapheme breaking over ~1,300 of them)
        // cost more than the rest of a fresh process's cached answer together.
        let parts = raw.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map(Substring.init)
        guard parts.count == 3 || parts.count == 2, let payload = Base64URL.decode(parts[1]),
            let claims = (try? JSONValue.parse(payload))?.objectValue
        else { throw .malformed("the ID token is not a JWT") }
        self.raw = raw
        self.claims = claims
        header = Base64URL.decode(parts[0]).flatMap { try? JSONValue.parse($0) }?.objectValue ?? JSONObject()
        var input = String(parts[0])  // not `joined(separator:)`, which is not specialized here
        input.append(".")
        input.append(contentsOf: parts[1])
        signingInput = input
        signature = parts.count == 3 ? Base64URL.decode(parts[2]) ?? [] : []
    }

    public func string(_ claim: String) -> String? { claims[claim]?.stringValue }

    public var objectId: String? { string("oid") ?? string("sub") }
    public var tenantId: String? { string("tid") }
    public var nonce: String? { string("nonce") }
    /// `preferred_username`, else `upn`, else `email` / the first of `emails` (B2C).
    public var username: String? {
        string("preferred_username") ?? string("upn") ?? string("email")
            ?? claims["emails"]?.arrayValue?.first?.stringValue
    }
    public var name: String? { string("name") }
    /// A NumericDate claim (`exp`, `nbf`, `iat`) in Unix seconds.
    public func time(_ claim: String) -> Int64? { claims[claim]?.numberValue.flatMap { Int64(exactly: $0.rounded(.down)) } }
    /// `aud`: one audience or several.
    public var audiences: [String] {
        claims["aud"]?.stringValue.map { [$0] } ?? (claims["aud"]?.arrayValue ?? []).compactMap(\.stringValue)
    }
}

/// The `client_info` of a token response: `{uid, utid}` base64url-encoded.
public struct ClientInfo: Sendable, Equatable {
    public let uid: String
    public let utid: String
    public let raw: String

    public init(raw: String) throws(AuthError) {
        guard let bytes = Base64URL.decode(raw), let value = try? JSONValue.parse(bytes),
            let uid = value["uid"]?.stringValue, let utid = value["utid"]?.stringValue
        else { throw .malformed("client_info is not base64url JSON with uid and utid") }
        self.uid = uid
        self.utid = utid
        self.raw = raw
    }

    /// `{uid}.{utid}`.
    public var homeAccountId: String { "\(uid).\(utid)" }
}
