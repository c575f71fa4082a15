import AuthCore

/// Reads the claims of a `WWW-Authenticate: Bearer ... error="insufficient_claims",
/// claims="<base64 JSON>"` challenge (continuous access evaluation, conditional access).
enum ClaimsChallenge {
    static func claims(in header: String?) -> String? {
        guard let header, let start = header.firstRange(of: "claims=\"") else { return nil }
        let value = header[start.upperBound...].prefix { $0 != "\"" }
        guard !value.isEmpty else { return nil }
        if value.hasPrefix("{") { return String(value) }
        guard let bytes = Base64URL.decode(value) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
