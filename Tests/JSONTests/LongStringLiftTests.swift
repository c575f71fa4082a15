import Testing

@testable import JSON

/// A document parsed with its long strings lifted out (``LongStringLift``) is the document
/// jansson parses whole: the same tree, the same verdict, the same error position.
@Suite struct LongStringLiftTests {
    private static let token = String(repeating: "eyJ0eXAiOiJKV1QifQ.", count: 20)  // 380 bytes, verbatim
    private static let cache =
        #"{"AccessToken":{"k-1":{"secret":"\#(token)","target":"User.Read"}},"#
        + #""IdToken":{"k-2":{"secret":"\#(token)x","realm":"t"}},"RefreshToken":{"k-3":{"secret":"short"}}}"#

    /// The tree from the lifted parse, serialized, next to jansson's whole parse of the text.
    private func expectSameTree(_ text: String, lifts: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = Array(text.utf8)
        let lift = bytes.withUnsafeBufferPointer { LongStringLift($0) }
        #expect((lift?.lifted.count ?? 0) == lifts, sourceLocation: sourceLocation)
        let tree = try JSONTree(parsingObject: bytes)
        #expect(tree.serialized() == (try JSONValue.parse(bytes)).serialized(), sourceLocation: sourceLocation)
    }

    @Test func liftsATokenCachesSecretsAndPutsThemBack() throws {
        try expectSameTree(Self.cache, lifts: 2)
        let tree = try JSONTree(parsingObject: Array(Self.cache.utf8))
        #expect(tree.member("k-1", of: "AccessToken")?["secret"]?.stringValue == Self.token)
        #expect(tree.member("k-2", of: "IdToken")?["secret"]?.stringValue == Self.token + "x")
    }

    @Test func liftsOnlyVerbatimValuesInObjectsUnderPlainKeys() throws {
        let long = Self.token
        try expectSameTree(#"{"top":"\#(long)","a":{"b":"\#(long)"}}"#, lifts: 2)  // depths 1 and 2
        try expectSameTree(#"{"a":{"b":{"c":{"d":"\#(long)"}}}}"#, lifts: 0)  // deeper than three levels
        try expectSameTree(#"{"a":["\#(long)",{"b":"\#(long)"}]}"#, lifts: 0)  // in an array
        try expectSameTree(#"{"a\"b":{"c":"\#(long)"}}"#, lifts: 0)  // under a key with an escape
        try expectSameTree(#"{"a":"\#(long)\n","b":"\#(long)\u00e9"}"#, lifts: 0)  // escapes in the value
        try expectSameTree(#"{"a":"\#(long)é","b":"\#(String(repeating: "{[:,]}", count: 50))"}"#, lifts: 1)
        try expectSameTree(#"{ "a" : { "b" : "\#(long)" } , "c" : [ 1 , "x" ] }"#, lifts: 1)
        try expectSameTree(#"{"\#(long)":"\#(long)"}"#, lifts: 1)  // a long key stays
    }

    @Test func invalidDocumentsGetJanssonsVerdictAtTheSamePlace() {
        let long = Self.token
        for text in [
            #"{"a":{"s":"\#(long)","s":"\#(long)"}}"#,  // a duplicate key
            #"{"a":"\#(long)",}"#, #"{"a":"\#(long)"} x"#, #"{"a":"\#(long)""#, #"{"a":"\#(long)"#,
            #"}}}{"a":"\#(long)"}"#, #"["\#(long)"]"#, #"{"a":"\#(long)","b":tru}"#,
        ] {
            let bytes = Array(text.utf8)
            var whole: JSONParseError?
            do { _ = try JSONValue.parse(bytes) } catch { whole = error }
            var lifted: JSONParseError?
            do { _ = try JSONTree(parsingObject: bytes) } catch { lifted = error }
            #expect(lifted != nil, "\(text)")
            if let whole, let lifted {
                #expect(lifted.position == whole.position, "\(text)")
            }
        }
        // Not UTF-8 inside a long value, and a control byte: not lifted, so jansson sees them.
        for odd: UInt8 in [0xFF, 0x01] {
            let bytes = Array(#"{"a":{"b":""#.utf8) + Array(long.utf8) + [odd] + Array(#""}}"#.utf8)
            #expect(throws: JSONParseError.self) { try JSONTree(parsingObject: bytes) }
        }
    }
}
