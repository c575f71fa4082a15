import JSON

/// An ID token's claims. Read from a cached token, they are the payload's JSON text as the
/// token carries it, checked by ``JSON/JSONObjectIndex``'s scanner: a claim is parsed when it
/// is read, and a reply can put the text in as it is (``verbatimText``). Parsing the claims
/// of a fresh process's cached ID token (800 bytes through jansson, then written out again
/// for the reply's account) cost its first silent answer about 27 µs.
///
/// ```swift
/// let claims = try IDToken.claims(of: cached.secret)
/// let tenant = claims["tid"]?.stringValue
/// let object = claims.object            // every claim, parsed
/// ```
public struct IDTokenClaims: Sendable, Equatable {
    private enum Storage: Sendable {
        /// The text, as the scanner found it (member ranges, nothing parsed).
        case scanned(JSONObjectIndex)
        case parsed(JSONObject)
    }

    private let storage: Storage

    /// Claims already parsed (a new token's, validated whole).
    public init(_ object: JSONObject) {
        storage = .parsed(object)
    }

    /// The claims of a payload's JSON text; `nil` when it is not a JSON object. Text the
    /// scanner is unsure of (see ``JSON/JSONScanner``) is parsed whole by jansson, whose
    /// verdict stands.
    public init?(json text: [UInt8]) {
        if let index = JSONObjectIndex(scanning: text, sections: [], fields: []) {
            storage = .scanned(index)
        } else if let object = (try? JSONValue.parse(text))?.objectValue {
            storage = .parsed(object)
        } else {
            return nil
        }
    }

    /// The claim `name`, parsed (`nil` when absent).
    public subscript(name: String) -> JSONValue? {
        switch storage {
        case .scanned(let index): index.value(forKey: name)
        case .parsed(let object): object[name]
        }
    }

    /// Every claim, parsed, in the token's order.
    public var object: JSONObject {
        switch storage {
        case .scanned(let index): (try? JSONValue.parse(index.bytes))?.objectValue ?? JSONObject()  // the scanner vouched for it
        case .parsed(let object): object
        }
    }

    /// The claims' JSON text when it may go into a reply as it is: text the scanner checked,
    /// on one line (a line break, legal between JSON tokens, would end a newline-delimited
    /// message). `nil` for parsed claims or text with a line break: serialize ``object``.
    public var verbatimText: [UInt8]? {
        guard case .scanned(let index) = storage,
            !index.bytes.contains(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") })
        else { return nil }
        return index.bytes
    }

    /// The same claims, however each side holds them.
    public static func == (lhs: IDTokenClaims, rhs: IDTokenClaims) -> Bool {
        if case .scanned(let left) = lhs.storage, case .scanned(let right) = rhs.storage, left.bytes == right.bytes {
            return true
        }
        return lhs.object == rhs.object
    }
}
