import AuthSeams

/// The HTML pages the listener shows in the browser. Everything that came from the
/// request is HTML-escaped; the pages load nothing (no scripts, no images).
enum RedirectPages {
    /// `text` inert in element content and quoted attribute values (``Markup``).
    static func escapeHTML(_ text: String) -> String { Markup.escaped(text) }

    /// Sign-in finished: the code is on its way to the application.
    static func success() -> HTTPReply {
        HTTPReply(
            status: .ok,
            body: page(
                title: "Sign-in complete",
                paragraphs: ["You are signed in. You can close this window and return to the application."]))
    }

    /// The identity platform answered with an error (shown, escaped).
    static func failure(error: String, description: String?, subcode: String?) -> HTTPReply {
        var paragraphs = ["The sign-in did not complete. You can close this window and return to the application."]
        var detail = "Error: \(escapeHTML(error))"
        if let subcode, !subcode.isEmpty { detail += " (\(escapeHTML(subcode)))" }
        paragraphs.append(detail)
        if let description, !description.isEmpty { paragraphs.append(escapeHTML(description)) }
        return HTTPReply(status: .ok, body: page(title: "Sign-in failed", paragraphs: paragraphs))
    }

    /// A request to the redirect path that does not belong to the sign-in in progress.
    static func stateMismatch() -> HTTPReply {
        HTTPReply(
            status: .badRequest,
            body: page(
                title: "Unexpected response",
                paragraphs: ["This response does not belong to the sign-in in progress and was ignored."]))
    }

    /// A generic error page for `status` (404, 405, 413...) with a fixed message.
    static func error(_ status: HTTPStatus, message: String) -> HTTPReply {
        HTTPReply(status: status, body: page(title: "\(status.code) \(status.reason)", paragraphs: [escapeHTML(message)]))
    }

    /// `paragraphs` must already be escaped.
    private static func page(title: String, paragraphs: [String]) -> String {
        let body = paragraphs.map { "<p>\($0)</p>" }.joined(separator: "\n")
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escapeHTML(title))</title>
            <style>body{font-family:sans-serif;margin:3em;max-width:40em}</style></head>
            <body><h1>\(escapeHTML(title))</h1>
            \(body)
            </body></html>

            """
    }
}
