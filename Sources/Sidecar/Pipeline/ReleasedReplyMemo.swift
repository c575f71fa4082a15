import JSON
import JSONRPC
import POSIXSupport

/// A session's last fast-path reply as its reply stage released it, kept as text split where
/// the correlation id goes: the next request with the same params whose engine answer is the
/// same text (the same kept head and tail: the same cached token, account and expiry) gets the
/// same released reply, its own correlation id put in, without the value built, passed through
/// the stage and serialized again. The stage is a function of the request's params and the
/// engine's answer, so its verdict for an identical pair is the one it gave; the audit stage
/// still sees every reply.
final class ReleasedReplyMemo: Sendable {
    private struct Entry {
        let engine: SerializedResult.Template
        let params: JSONValue?
        let head: [UInt8]
        let tail: [UInt8]
        let released: JSONObject
    }

    private let last = PthreadMutex<Entry?>(nil)

    /// The released reply kept for `engine`'s text and `params`, with `engine`'s correlation
    /// id: its text and its value; `nil` when what is kept is for another answer or params.
    func reuse(_ engine: SerializedResult.Template, params: JSONValue?) -> (text: SerializedResult, value: JSONValue)? {
        guard let entry = last.withLock({ $0 }), entry.engine.head == engine.head, entry.engine.tail == engine.tail, entry.params == params
        else { return nil }
        var released = entry.released
        released["correlationId"] = .string(engine.part)
        return (SerializedResult(head: entry.head, part: engine.part, tail: entry.tail), .object(released))
    }

    /// Keeps `released` (serialized as `text`), the stage's answer for `engine` and `params`,
    /// when its correlation id is `engine`'s and appears in `text` exactly once.
    func keep(_ engine: SerializedResult.Template, params: JSONValue?, released: JSONValue, text: [UInt8]) {
        guard case .object(let object) = released, object["correlationId"]?.stringValue == engine.part else { return }
        let quoted = Array("\"\(engine.part)\"".utf8)
        let starts = SilentReplyCache.occurrences(of: quoted, in: text)
        guard starts.count == 1, let start = starts.first else { return }
        let entry = Entry(
            engine: engine, params: params, head: Array(text[..<(start + 1)]), tail: Array(text[(start + quoted.count - 1)...]),
            released: object)
        last.withLock { $0 = entry }
    }
}
