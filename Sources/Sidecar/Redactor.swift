/// Masks secrets in text bound for the log by what they are: JWTs (access and ID tokens), and
/// the values of OAuth parameters and headers that carry codes, tokens, verifiers or secrets.
/// `code` is also the common word for an error's code (azd's `NotSignedInError`, a log line's
/// `code=` metadata), so its value is masked only when it is not a name or a number
/// (``isName(_:)``): an authorization code never is.
///
/// ```swift
/// Redactor.redact("code=0.AAA&state=x")   // "code=[redacted]&state=x"
/// Redactor.redact("code=NotSignedInError") // unchanged
/// ```
public enum Redactor {
    static let secretKeys = [
        "access_token", "refresh_token", "id_token", "code", "code_verifier", "client_secret",
        "password", "assertion", "device_code", "user_code", "accessToken", "refreshToken", "idToken",
        "Bearer", "bearer",
    ]

    public static func redact(_ text: String) -> String {
        var output = maskJWTs(in: text)
        for key in secretKeys { output = maskValues(after: key, in: output) }
        return output
    }

    /// Replaces every `xxx.yyy.zzz` base64url triple that looks like a JWT.
    private static func maskJWTs(in text: String) -> String {
        guard text.contains("eyJ") else { return text }
        var result = ""
        var remaining = Substring(text)
        while let start = remaining.firstRange(of: "eyJ") {
            result += remaining[..<start.lowerBound]
            let candidate = remaining[start.lowerBound...].prefix { $0.isBase64URL || $0 == "." }
            if candidate.split(separator: ".", omittingEmptySubsequences: false).count >= 2, candidate.count >= 16 {
                result += "[redacted-jwt]"
            } else {
                result += candidate
            }
            remaining = remaining[candidate.endIndex...]
        }
        return result + remaining
    }

    /// Masks the value after `key=`, `key: `, `"key":"` or `key ` (for `Bearer x`).
    private static func maskValues(after key: String, in text: String) -> String {
        guard text.contains(key) else { return text }
        var result = ""
        var remaining = Substring(text)
        while let found = remaining.firstRange(of: key) {
            result += remaining[..<found.upperBound]
            var rest = remaining[found.upperBound...]
            let before = remaining[..<found.lowerBound].last
            let isWholeKey = before.map { !$0.isLetter && !$0.isNumber && $0 != "_" } ?? true
            let separator = rest.prefix { $0 == "=" || $0 == ":" || $0 == "\"" || $0 == " " }
            let value = rest.dropFirst(separator.count).prefix { $0.isBase64URL || $0 == "." || $0 == "~" || $0 == "%" || $0 == "+" || $0 == "/" }
            if isWholeKey, !separator.isEmpty, !value.isEmpty, key != "code" || !isName(value) {
                result += separator + "[redacted]"
                rest = rest[value.endIndex...]
            }
            remaining = rest
        }
        return result + remaining
    }
}

extension Redactor {
    /// An error's name or number rather than a secret: letters (at least one lower-case, as in
    /// `NotSignedInError`, `invalid_grant`) and `_`, up to 64; or up to 10 digits (`50126`).
    /// Authorization codes are long and hold digits, dots and dashes.
    static func isName(_ value: Substring) -> Bool {
        if value.count <= 10, value.allSatisfy({ $0.isASCII && $0.isNumber }) { return true }
        return value.count <= 64 && value.first?.isLetter == true && value.contains(where: \.isLowercase)
            && value.allSatisfy { $0.isASCII && ($0.isLetter || $0 == "_") }
    }
}

extension Character {
    var isBase64URL: Bool {
        isASCII && (isLetter || isNumber || self == "-" || self == "_" || self == "=")
    }
}
