import JSON
import JSONRPC

/// What a forwarded session is told about the laptop: nothing it does not need. Its
/// `getDeviceInformation` says the device mode and that the session is forwarded, not the
/// laptop's host name, OS or kernel release, architecture or browser command; an error relayed to
/// it names no file of the laptop (an assertion file, the cache, a key file: a path in the
/// message or data becomes ``pathStandIn``). The agent's own log keeps the full error.
public enum ForwardDisclosure {
    /// What a laptop path in an error becomes.
    public static let pathStandIn = "(a file on the agent's machine)"

    /// `getDeviceInformation`'s result for a forwarded session.
    public static func deviceInformation(_ result: JSONValue) -> JSONValue {
        var kept: JSONObject = [:]
        for key in ["deviceMode", "sharedDeviceModeSource"] { kept[key] = result[key] }
        kept["brokerAvailable"] = false
        kept["extraDeviceInformation"] = ["forwarded": true]
        return .object(kept)
    }

    /// `error` with every laptop path in its message and data replaced.
    public static func error(_ error: RPCError) -> RPCError {
        var scrubbed = error
        scrubbed.message = withoutPaths(error.message)
        for (key, value) in error.data where key != "name" { scrubbed.data[key] = withoutPaths(value) }
        return scrubbed
    }

    private static func withoutPaths(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text): return .string(withoutPaths(text))
        case .array(let items): return .array(items.map(withoutPaths))
        case .object(let members):
            var scrubbed = members
            for (key, member) in members { scrubbed[key] = withoutPaths(member) }
            return .object(scrubbed)
        default: return value
        }
    }

    /// `text` with each word that is an absolute or home-relative file path (`/a/b`, `~/a`, at the
    /// start or after a space, a quote, a parenthesis, `=`, `:` or `,`; a URL's path is not one)
    /// replaced by ``pathStandIn``.
    static func withoutPaths(_ text: String) -> String {
        let characters = Array(text)
        var out = ""
        var index = 0
        let starts: Set<Character> = [" ", "\t", "\n", "\"", "'", "(", "[", "=", ":", ",", "`"]
        let ends: Set<Character> = [" ", "\t", "\n", "\"", "'", ")", "]", ",", ";", "`"]
        while index < characters.count {
            let atWordStart = index == 0 || starts.contains(characters[index - 1])
            if atWordStart, let end = pathEnd(characters, from: index, ends: ends) {
                out += pathStandIn
                index = end
                continue
            }
            out.append(characters[index])
            index += 1
        }
        return out
    }

    /// Where the path starting at `start` ends, when one starts there: `/x/...` with a second
    /// slash, or `~/...`.
    private static func pathEnd(_ characters: [Character], from start: Int, ends: Set<Character>) -> Int? {
        var end = start
        while end < characters.count, !ends.contains(characters[end]) { end += 1 }
        let word = characters[start..<end]
        guard word.count > 2 else { return nil }
        var trimmed = word
        while let last = trimmed.last, last == "." || last == ":" { trimmed = trimmed.dropLast() }
        let isPath =
            (trimmed.first == "/" && trimmed.dropFirst().contains("/") && !trimmed.starts(with: ["/", "/"]))
            || trimmed.starts(with: ["~", "/"])
        guard isPath else { return nil }
        return start + trimmed.count
    }
}
