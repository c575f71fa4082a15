import AuthCore
import JSON
import JSONRPC
import POSIXSupport

#if canImport(Glibc)
    import Glibc
#endif

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
        return SerializedResult(head: template.head, part: correlationId, tail: template.tail)
    }

    /// The stand-ins the template is made with: control characters, so their escaped text
    /// appears in no other string's text.
    private static let marker = "\u{1}correlationId\u{1}"
    private static let accessTokenMarker = "\u{1}accessToken\u{1}"
    private static let idTokenMarker = "\u{1}idToken\u{1}"
    private static let claimsMarker = "\u{1}idTokenClaims\u{1}"
    /// The stand-ins as JSON strings, made once (they are constants).
    private static let quotedMarker = quoted(marker)
    private static let quotedAccessTokenMarker = quoted(accessTokenMarker)
    private static let quotedIdTokenMarker = quoted(idTokenMarker)
    private static let quotedClaimsMarker = quoted(claimsMarker)

    /// Serializes the result with ``marker`` as its correlation id and splits it there; `nil`
    /// when a stand-in's text is not found exactly once (then every answer is serialized whole).
    ///
    /// The tokens, when JSON takes their text verbatim (``isVerbatim(_:)``, as base64url JWTs
    /// always are), are serialized as short stand-ins and put in afterwards: jansson's walk,
    /// character by character, over an access and an ID token was most of the cost of a
    /// fresh process's first answer's text. The text is the same either way (a test compares).
    /// So are the account's ID token claims, as the token carries them
    /// (``AuthCore/IDTokenClaims/verbatimText``): the same JSON value as their serialization,
    /// the same text when the token's is compact.
    private func makeTemplate(_ answer: CachedSilentAnswer) -> Template? {
        var result = answer.result(Self.marker)
        var stands = [StandIn(text: Self.quotedMarker, value: nil)]
        // An SSH certificate's result quotes the certificate elsewhere too (`sshCertificate`): kept whole.
        if result.tokenType != SSHKeyBinding.tokenType, Self.isVerbatim(result.accessToken) {
            stands.append(StandIn(text: Self.quotedAccessTokenMarker, value: Self.quotedVerbatim(result.accessToken)))
            result.accessToken = Self.accessTokenMarker
        }
        if let idToken = result.idToken, Self.isVerbatim(idToken) {
            stands.append(StandIn(text: Self.quotedIdTokenMarker, value: Self.quotedVerbatim(idToken)))
            result.idToken = Self.idTokenMarker
        }
        var claimsStandIn: String?
        if let claims = result.account.idTokenClaims?.verbatimText {
            stands.append(StandIn(text: Self.quotedClaimsMarker, value: claims))
            claimsStandIn = Self.claimsMarker
        }
        let text = AuthJSON.tokenResult(result, claimsStandIn: claimsStandIn).serialized()
        for index in stands.indices {
            let starts = Self.occurrences(of: stands[index].text, in: text)
            guard starts.count == 1, let start = starts.first else { return nil }
            stands[index].start = start
        }
        // The text between the stand-ins, the tokens in their places; the correlation id's
        // quotes end the head and start the tail.
        var head: [UInt8] = []
        var tail: [UInt8] = []
        var copied = 0
        var inTail = false
        for stand in stands.sorted(by: { $0.start < $1.start }) {
            let piece = text[copied..<stand.start]
            if inTail { tail += piece } else { head += piece }
            if let value = stand.value {
                if inTail { tail += value } else { head += value }
            } else {
                head.append(UInt8(ascii: "\""))
                tail.append(UInt8(ascii: "\""))
                inTail = true
            }
            copied = stand.start + stand.text.count
        }
        tail += text[copied...]
        let template = Template(head: head, tail: tail)
        state.withLock { state in
            if state.stamp != answer.identity.stamp || state.templates.count >= Self.capacity {
                state = State(stamp: answer.identity.stamp)
            }
            state.templates[answer.identity] = template
        }
        return template
    }

    /// A stand-in's text in the serialized result (quotes included), what goes in its place
    /// (`nil`: the correlation id, which stays out of the template), and where it was found.
    /// A struct, not a tuple: a tuple type's metadata is made at run time on first use.
    private struct StandIn {
        let text: [UInt8]
        let value: [UInt8]?
        var start = 0
    }

    /// Where `needle` (not empty) starts in `haystack`, every time.
    static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
        guard let first = needle.first, needle.count <= haystack.count else { return [] }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { pin in
                guard let hayBase = hay.baseAddress, let pinBase = pin.baseAddress else { return [] }
                var starts: [Int] = []
                var start = 0
                let last = hay.count - pin.count
                while start <= last, let found = memchr(hayBase + start, Int32(first), last - start + 1) {
                    let candidate = hayBase.distance(to: found.assumingMemoryBound(to: UInt8.self))
                    if memcmp(hayBase + candidate, pinBase, pin.count) == 0 { starts.append(candidate) }
                    start = candidate + 1
                }
                return starts
            }
        }
    }

    /// `text` as a JSON string (quotes included).
    private static func quoted(_ text: String) -> [UInt8] { JSONValue.string(text).serialized() }

    /// `text` in quotes as it is: the JSON string of text ``isVerbatim(_:)`` accepts.
    private static func quotedVerbatim(_ text: String) -> [UInt8] {
        var quoted = [UInt8(ascii: "\"")]
        quoted += text.utf8
        quoted.append(UInt8(ascii: "\""))
        return quoted
    }

    /// Whether JSON text holds `text` as it is (``JSON/JSONText/isVerbatim(_:)``).
    static func isVerbatim(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable(JSONText.isVerbatim) ?? Array(text.utf8).withUnsafeBufferPointer(JSONText.isVerbatim)
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
