import FoundationEssentials

/// Base64url (RFC 4648 section 5) without padding, as JWTs, PKCE and client_info use it.
public enum Base64URL {
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text = Data(bytes).base64EncodedString()
        text.unicodeScalars.removeAll { $0 == "=" }
        return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }

    /// Decodes base64url or standard base64, padded or not; `nil` on any other character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var standard = String(text.filter { $0 != "=" }.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }
}
