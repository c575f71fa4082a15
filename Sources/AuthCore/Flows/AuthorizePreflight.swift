import AuthSeams

/// Before a browser sign-in, one look at the authorization endpoint, so a sign-in that cannot
/// succeed fails at once instead of after the interactive time limit (600 s by default).
///
/// The look is a GET with `client_id`, `redirect_uri` and `response_type` only: no scope, state
/// or PKCE challenge, so nobody can sign in with it and no code is ever issued; it carries no
/// token or secret. It fails the sign-in only on what is certain:
/// - the service cannot be reached (connection refused, DNS, TLS): that error, at once;
/// - an error page naming a configuration mistake the user's browser would show too: an
///   unknown application (AADSTS700016), a redirect URI the app does not list (AADSTS50011),
///   an unknown tenant (AADSTS90002), the app disabled (AADSTS7000112):
///   `invalidConfiguration` with the service's sentence.
/// Anything else (a redirect back with `error=invalid_request`, a sign-in page, another
/// provider's error page) goes on to the browser as before: the user may still sign in there.
struct AuthorizePreflight: Sendable {
    let transport: any HTTPTransport

    /// The AADSTS codes that no sign-in in the browser can get past.
    static let fatalCodes: Set<String> = ["700016", "50011", "90002", "7000112"]

    func check(authorizationEndpoint: String, clientId: String, redirectURI: String) async throws {
        let fields = [("client_id", clientId), ("redirect_uri", redirectURI), ("response_type", "code")]
        let separator = authorizationEndpoint.contains("?") ? "&" : "?"
        let request = HTTPRequest(url: authorizationEndpoint + separator + FormEncoding.query(fields))
        let response = try await ServiceCall.send(request, over: transport)
        guard (200..<300).contains(response.status) || (400..<600).contains(response.status) else { return }
        guard let sentence = Self.fatalSentence(in: response.bodyText) else { return }
        throw AuthError(
            .invalidConfiguration,
            "the sign-in page refuses this configuration before anyone can sign in: \(sentence) "
                + "(check clientId, authority and the app registration's redirect URIs)")
    }

    /// The service's first sentence from a fatal AADSTS code in an error page, markup removed
    /// and cut to 200 characters, so the fix that follows it fits a verb's one line; `nil`
    /// when the page names none.
    static func fatalSentence(in page: String) -> String? {
        let text = plainText(page)
        var rest = Substring(text)
        while let range = rest.firstRange(of: "AADSTS") {
            let digits = rest[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
            if fatalCodes.contains(String(digits)) {
                let line = rest[range.lowerBound...].prefix { $0 != "\n" }
                let sentence = line.firstRange(of: ". ").map { line[..<$0.upperBound] } ?? line
                return String(sentence.prefix(200)).trimmingTrailingSpaces
            }
            rest = rest[range.upperBound...]
        }
        return nil
    }
}

/// An HTML page's text: each tag a line break, the five entities `Markup` writes undone.
private func plainText(_ page: String) -> String {
    var text = ""
    var inTag = false
    for character in page {
        switch character {
        case "<": inTag = true
        case ">" where inTag:
            inTag = false
            text.append("\n")
        default: if !inTag { text.append(character) }
        }
    }
    for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&#x27;", "'"), ("&amp;", "&")] {
        text = text.replacing(entity, with: character)
    }
    return text
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = Substring(self)
        while text.last?.isWhitespace == true { text = text.dropLast() }
        return String(text)
    }
}
