/// Text made inert in HTML and in Pango markup (what zenity and notify-send render): the one
/// rule, for the redirect listener's pages and the forward socket's approval question.
public enum Markup {
    /// `text` with `&`, `<`, `>`, `"` and `'` as entities: inert in element content and in
    /// quoted attribute values.
    public static func escaped(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
