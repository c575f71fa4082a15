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
        let parts = try Self.segments(of: raw)
        self.raw = raw
        claims = try Self.claims(inPayload: parts.payload)
        header = Base64URL.decode(parts.header).flatMap { try? JSONValue.parse($0) }?.objectValue ?? JSONObject()
        signingInput = String(raw[..<parts.payload.endIndex])
        signature = parts.signature.flatMap { Base64URL.decode($0) } ?? []
    }

    /// The claims of the ID token `raw`, without decoding its header and signature: what a
    /// cached ID token is read for (validation, which needs them, came before it was cached).
    /// A fresh process reads one for its first silent answer: the payload's text is scanned,
    /// not parsed (``IDTokenClaims``).
    public static func claims(of raw: String) throws(AuthError) -> IDTokenClaims {
        guard let bytes = Base64URL.decode(try segments(of: raw).payload), let claims = IDTokenClaims(json: bytes) else {
            throw .malformed("the ID token is not a JWT")
        }
        return claims
    }

    private static func claims(inPayload payload: Substring) throws(AuthError) -> JSONObject {
        guard let bytes = Base64URL.decode(payload), let claims = (try? JSONValue.parse(bytes))?.objectValue else {
            throw .malformed("the ID token is not a JWT")
        }
        return claims
    }

    /// The token's two or three dot-separated segments, found on its bytes (splitting on
    /// Characters, or even with the generic `split` over the bytes, cost more than decoding).
    static func segments(of raw: String) throws(AuthError) -> (header: Substring, payload: Substring, signature: Substring?) {
        let dots =
            raw.utf8.withContiguousStorageIfAvailable(Self.dotOffsets(in:))
            ?? Array(raw.utf8).withUnsafeBufferPointer(Self.dotOffsets(in:))
        let utf8 = raw.utf8
        func index(_ offset: Int) -> String.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
        switch dots.count {
        case 1: return (raw[..<index(dots[0])], raw[index(dots[0] + 1)...], nil)  // unsigned: header.payload
        case 2: return (raw[..<index(dots[0])], raw[index(dots[0] + 1)..<index(dots[1])], raw[index(dots[1] + 1)...])
        default: throw .malformed("the ID token is not a JWT")
        }
    }

    /// Where the first three dots are in `bytes`.
    private static func dotOffsets(in bytes: UnsafeBufferPointer<UInt8>) -> [Int] {
        var dots: [Int] = []
        var offset = 0
        while dots.count < 3, let next = bytes[offset...].firstIndex(of: UInt8(ascii: ".")) {
            dots.append(next)
            offset = next + 1
        }
        return dots
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
