import AuthCore
import JSON
import JSONRPC
import POSIXSupport

/// `acquireTokenSilent` results from memory, kept serialized: a token an identical request
/// found in the same version of the cache is answered with the text made for the first one,
/// only its correlation id put in (the rest of the result is the same: token, expiry, account,
/// ID token, authority). Emptied when the cache document changes (a new stamp).
final class SilentReplyCache: Sendable {
    /// At most this many request shapes are kept per version of the cache.
    static let capacity = 64

    /// A result's text split where its correlation id goes.
    struct Template: Sendable {
        let head: [UInt8]
        let tail: [UInt8]
    }

    private struct State {
        var stamp: UInt64 = 0
        var templates: [CachedSilentAnswer.Identity: Template] = [:]
    }

    private let state = PthreadMutex(State())

    /// The result of `answer` for `correlationId`, serialized.
    func result(of answer: CachedSilentAnswer, correlationId: String) -> SerializedResult {
        guard Self.isPlain(correlationId) else {
            return SerializedResult(pieces: [AuthJSON.tokenResult(answer.result(correlationId)).serialized()])
        }
        let template = state.withLock { $0.stamp == answer.identity.stamp ? $0.templates[answer.identity] : nil }
        guard let template = template ?? makeTemplate(answer) else {
            return SerializedResult(pieces: [AuthJSON.tokenResult(answer.result(correlationId)).serialized()])
        }
        return SerializedResult(pieces: [template.head, Array(correlationId.utf8), template.tail])
    }

    /// The stand-in correlation id the template is made with: control characters, so its
    /// escaped text appears in no other string's text.
    private static let marker = "\u{1}correlationId\u{1}"

    /// Serializes the result with ``marker`` as its correlation id and splits it there; `nil`
    /// when the member's text is not found exactly once (then every answer is serialized whole).
    private func makeTemplate(_ answer: CachedSilentAnswer) -> Template? {
        let text = AuthJSON.tokenResult(answer.result(Self.marker)).serialized()
        let key = Array(#""correlationId":"#.utf8)
        var member = key
        JSONValue.string(Self.marker).serialize(into: &member)  // "\u0001correlationId\u0001"
        let starts = Self.occurrences(of: member, in: text)
        guard starts.count == 1, let start = starts.first else { return nil }
        // head: up to the value's opening quote; tail: from its closing quote
        let template = Template(head: Array(text[..<(start + key.count + 1)]), tail: Array(text[(start + member.count - 1)...]))
        state.withLock { state in
            if state.stamp != answer.identity.stamp || state.templates.count >= Self.capacity {
                state = State(stamp: answer.identity.stamp)
            }
            state.templates[answer.identity] = template
        }
        return template
    }

    private static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
        guard needle.count <= haystack.count else { return [] }
        return (0...(haystack.count - needle.count)).filter { start in
            haystack[start] == needle[0] && haystack[start..<(start + needle.count)].elementsEqual(needle)
        }
    }

    /// Whether `id` goes into JSON text as it is (letters, digits, dashes: what
    /// ``AuthJSON/correlationId(_:)`` accepts and makes). Over the string's bytes in place
    /// (walking `String.UTF8View` indices took 3.6% of a pipelined token's CPU, this 2.5%).
    private static func isPlain(_ id: String) -> Bool {
        id.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isPlain(byte:)) } ?? id.utf8.allSatisfy(isPlain(byte:))
    }

    private static func isPlain(byte: UInt8) -> Bool {
        let folded = byte | 0x20  // an ASCII letter in lower case; no other byte lands in a-z
        return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(folded) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "-")
    }
}
