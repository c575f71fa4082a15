import AuthSeams

/// One browser command from `$BROWSER` (or a fallback such as `xdg-open`), following
/// Python's `webbrowser` conventions: `$BROWSER` is a `:`-separated list of commands tried
/// in order; in each, `%s` is replaced by the URL, otherwise the URL is appended as the
/// last argument.
///
/// A command is split into words like a shell would, but with quoting only (`'...'`,
/// `"..."`, `\`): no variables, no globbing, no command substitution. The URL is inserted
/// after splitting, so it always stays inside one argument, whatever it contains.
struct BrowserCommand: Sendable, Equatable {
    /// The program (looked up in `PATH` unless it contains a `/`) and its arguments.
    var words: [String]

    /// The argument vector for `url`.
    func arguments(for url: String) -> [String] {
        guard words.contains(where: { $0.contains("%s") }) else { return words + [url] }
        return words.map { $0.replacingOccurrences(of: "%s", with: url) }
    }

    /// The commands of a `$BROWSER`-style list; empty entries are skipped, entries that
    /// cannot be split (an unterminated quote) are reported as failures.
    static func parseList(_ list: String) -> [Result<BrowserCommand, BrowserError>] {
        list.split(separator: ":", omittingEmptySubsequences: true).compactMap { entry in
            switch split(entry) {
            case .none: .failure(.unavailable("unterminated quote in browser command"))
            case .some(let words) where words.isEmpty: nil
            case .some(let words): .success(BrowserCommand(words: words))
            }
        }
    }

    /// Splits `text` into words with shell quoting rules (no expansions); nil when a quote
    /// or a trailing backslash is unterminated.
    static func split(_ text: Substring) -> [String]? {
        var words: [String] = []
        var current = ""
        var inWord = false
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n":
                if inWord {
                    words.append(current)
                    current = ""
                    inWord = false
                }
            case "'":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "'" {
                        closed = true
                        break
                    }
                    current.append(next)
                }
                guard closed else { return nil }
            case "\"":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" {
                        closed = true
                        break
                    }
                    if next == "\\" {
                        guard let escaped = iterator.next() else { return nil }
                        if !"\"\\$`".contains(escaped) { current.append("\\") }
                        current.append(escaped)
                    } else {
                        current.append(next)
                    }
                }
                guard closed else { return nil }
            case "\\":
                guard let escaped = iterator.next() else { return nil }
                inWord = true
                current.append(escaped)
            default:
                inWord = true
                current.append(character)
            }
        }
        if inWord { words.append(current) }
        return words
    }
}

extension String {
    /// Every occurrence of `target` replaced by `replacement` (no Foundation).
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
