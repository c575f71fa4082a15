import Testing

@testable import JSON

/// ``JSONObjectIndex`` and its ``JSONScanner``: what the scanner accepts, jansson's strict
/// parse accepts and reads the same; entries are located and their fields read ahead.
@Suite struct JSONObjectIndexTests {
    let text = #"{"A":{"k1":{"h":"H","n":1,"u":"U"},"k2":{"x":[1,2],"h":7},"k3":[true]},"B":[true],"C":"c"}"#

    @Test func locatesSectionsEntriesAndFields() throws {
        let index = try #require(JSONObjectIndex(scanning: Array(text.utf8), sections: ["A"], fields: ["h", "u"]))
        #expect(index.keys == ["A", "B", "C"])
        #expect(index.isObject(forKey: "A") == true && index.isObject(forKey: "B") == false && index.isObject(forKey: "Z") == nil)
        var seen: [String] = []
        index.forEachEntry(of: "A") { key, fields in seen.append("\(key)=\(fields.map { $0 ?? "-" }.joined(separator: ","))") }
        #expect(seen == ["k1=H,U", "k2=-,-", "k3=-,-"])
        #expect(index.member("k2", of: "A") == ["x": [1, 2], "h": 7])
        #expect(index.member("zz", of: "A") == nil)
        #expect(index.value(forKey: "C") == "c")
        var all: [String] = []
        index.forEachMember(of: "A") { key, value in all.append("\(key):\(value?.typeName ?? "?")") }
        #expect(all == ["k1:object", "k2:object", "k3:array"])
        #expect(String(decoding: index.tree().serialized(), as: UTF8.self) == text)
    }

    @Test func readsEscapedFieldsAsJanssonDecodesThem() throws {
        let doc = #"{"A":{"k":{"h":"a\"b\\c\u00e9\ud83d\ude00\n"}}}"#
        let index = try #require(JSONObjectIndex(scanning: Array(doc.utf8), sections: ["A"], fields: ["h"]))
        var value: String??
        index.forEachEntry(of: "A") { _, fields in value = fields.first }
        #expect(value == "a\"b\\cé😀\n")
    }

    @Test func acceptsOrdinaryJSON() {
        let documents = [
            "{}", " \t\r\n{ } \n", #"{"a":{}}"#, #"{"a":[]}"#, #"{"a":[ 1 , 2 ]}"#,
            #"{"a":-0,"b":0.5,"c":-12.25e-7,"d":1E+9,"e":123456789012345678,"f":9.99e99}"#,
            #"{"a":true,"b":false,"c":null}"#, #"{"a":"\"\\\/\b\f\n\r\t\u0041\u00E9\u0000"}"#,
            "{\"a\":\"é中😀\u{7F}\"}", #"{"A":{"k":{"h":"x","h2":{"h":1}}}}"#,
        ]
        for document in documents {
            #expect(JSONObjectIndex(scanning: Array(document.utf8), sections: ["A"], fields: ["h"]) != nil, "\(document)")
            #expect(Self.agrees(Array(document.utf8)), "\(document)")
        }
    }

    @Test func refusesWhatJanssonRefuses() {
        let documents = [
            "", " ", "[1]", "\"s\"", "1", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "{\"a\":1 \"b\":2}",
            "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":-}", "{\"a\":1e}", "{\"a\":+1}", "{\"a\":0x1}",
            "{\"a\":tru}", "{\"a\":truex}", "{\"a\":nul}", "{\"a\":True}", "{\"a\":[1,]}", "{\"a\":[,1]}",
            "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}",
            "{\"a\":\"\\ud800\\u0041\"}", "{\"a\":\"tab\there\"}", "{\"a\":1}x", "{\"a\":1}{}", "{'a':1}",
            "{\"a\":1,\"a\":2}", "{\"x\":{\"a\":1,\"a\":2}}", "{\"x\":[{\"a\":1,\"a\":2}]}", "\u{FEFF}{}",
            "{\"a\":12345678901234567890}", "{\"a\":1e999}",
        ]
        for document in documents {
            #expect(JSONObjectIndex(scanning: Array(document.utf8), sections: ["x"], fields: []) == nil, "\(document)")
            #expect(Self.agrees(Array(document.utf8)), "\(document)")
        }
        let invalidUTF8: [[UInt8]] = [
            [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF8], [0x80], [0xC3],
            [0xE2, 0x82], [0x00],
        ]
        for bytes in invalidUTF8 {
            let document = Array(#"{"a":""#.utf8) + bytes + Array(#""}"#.utf8)
            #expect(JSONObjectIndex(scanning: document, sections: [], fields: []) == nil, "\(bytes)")
            #expect(Self.agrees(document), "\(bytes)")
        }
    }

    @Test func refusesDuplicateKeysAtEveryLevel() {
        for document in [
            #"{"A":1,"A":2}"#, #"{"A":{"k":1,"k":2}}"#, #"{"A":{"k":{"h":"x","h":"y"}}}"#,
            #"{"A":{"k":{"z":{"q":1,"q":1}}}}"#,
        ] {
            #expect(JSONObjectIndex(scanning: Array(document.utf8), sections: ["A"], fields: ["h"]) == nil, "\(document)")
        }
    }

    @Test func leavesUnsureInputToJansson() {
        // Valid for jansson, but the scanner does not vouch for them: the caller parses.
        for document in [
            #"{"a\u0062":1}"#, #"{"A":{"\u00e9":1}}"#, "{\"A\":{\"é\":1}}", #"{"x":{"a\u0062":1}}"#,
            #"{"a":1e100}"#,
        ] {
            #expect(JSONObjectIndex(scanning: Array(document.utf8), sections: ["A"], fields: []) == nil, "\(document)")
            #expect((try? JSONTree(parsingObject: Array(document.utf8))) != nil, "\(document)")
        }
        // A nested object with more members than the scanner compares pair by pair.
        func nested(_ count: Int) -> [UInt8] {
            Array(("{\"A\":{\"k\":{" + (0..<count).map { "\"m\($0)\":\($0)" }.joined(separator: ",") + "}}}").utf8)
        }
        #expect(JSONObjectIndex(scanning: nested(JSONScanner.maxPairwiseKeys), sections: ["A"], fields: []) != nil)
        #expect(JSONObjectIndex(scanning: nested(JSONScanner.maxPairwiseKeys + 1), sections: ["A"], fields: []) == nil)
        #expect((try? JSONTree(parsingObject: nested(JSONScanner.maxPairwiseKeys + 1))) != nil)
    }

    @Test func nestingUpToItsLimitOnly() {
        func nested(_ depth: Int) -> [UInt8] {
            Array(("{\"a\":" + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}").utf8)
        }
        #expect(JSONObjectIndex(scanning: nested(JSONScanner.maxDepth), sections: [], fields: []) != nil)
        #expect(JSONObjectIndex(scanning: nested(JSONScanner.maxDepth + 1), sections: [], fields: []) == nil)
        #expect(JSONObjectIndex(scanning: nested(100_000), sections: [], fields: []) == nil)  // no stack overflow
    }

    @Test func everyTruncationIsRefused() {
        let bytes = Array(#"{"A":{"k1":{"h":"H\u00e9","n":-1.5e3,"x":[1,{"y":null}]}},"B":[true,false],"C":"é"}"#.utf8)
        for count in 0..<bytes.count {
            #expect(JSONObjectIndex(scanning: Array(bytes[..<count]), sections: ["A"], fields: ["h"]) == nil, "\(count)")
        }
        #expect(JSONObjectIndex(scanning: bytes, sections: ["A"], fields: ["h"]) != nil)
    }

    /// Random edits of a document: whatever the scanner accepts, jansson accepts and reads the
    /// same (and most edits the scanner refuses, jansson refuses too).
    @Test func agreesWithJanssonOnMutatedDocuments() {
        let seed = Array(
            #"{"A":{"k1":{"h":"H\u00e9\n","n":-1.5e3,"x":[1,{"y":null}],"t":true},"k2":{"h":"x","f":false,"e":"é😀"}},"B":[0,"\ud83d\ude00",{"c":"d"}],"C":"c"}"#
                .utf8)
        let alphabet = Array(#"{}[]",:\ 0123456789aeEu.-+tfnlrsxXA"#.utf8) + [0x00, 0x09, 0x0A, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xED, 0xF4]
        var random = SplitMix64(seed: 21)
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[at] = alphabet.randomElement(using: &random) ?? 0
                case 1: bytes.insert(alphabet.randomElement(using: &random) ?? 0, at: at)
                case 2: bytes.remove(at: at)
                default: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 6)], at: at)
                }
                if bytes.isEmpty { bytes = seed }
            }
            if !Self.agrees(bytes) {
                Issue.record("disagrees with jansson: \(String(decoding: bytes, as: UTF8.self))")
                return
            }
            if JSONObjectIndex(scanning: bytes, sections: ["A"], fields: ["h"]) != nil { accepted += 1 }
        }
        #expect(accepted > 1_000)  // the test exercises acceptance, not only refusal
    }

    @Test func indexesAHugeDocument() throws {
        var text = #"{"A":{"#
        for entry in 0..<20_000 {
            if entry > 0 { text += "," }
            text += #""key-\#(entry)":{"h":"home-\#(entry % 100)","secret":"\#(String(repeating: "x", count: 200))","n":\#(entry)}"#
        }
        text += #"},"B":{}}"#
        let index = try #require(JSONObjectIndex(scanning: Array(text.utf8), sections: ["A", "B"], fields: ["h"]))
        var count = 0
        index.forEachEntry(of: "A") { key, fields in
            if key == "key-\(count)" && fields.first == "home-\(count % 100)" { count += 1 }
        }
        #expect(count == 20_000)
        #expect(index.member("key-19999", of: "A")?["n"] == 19_999)
    }

    /// Whether the scanner's verdict on `bytes` is consistent with jansson's: when it accepts,
    /// jansson accepts and every member (and entry, and field) reads the same.
    static func agrees(_ bytes: [UInt8]) -> Bool {
        guard let index = JSONObjectIndex(scanning: bytes, sections: ["A"], fields: ["h"]) else { return true }
        guard let tree = try? JSONTree(parsingObject: bytes), tree.keys == index.keys else { return false }
        for key in tree.keys where tree.value(forKey: key) != index.value(forKey: key) { return false }
        var janssonFields: [String] = []
        tree.forEachMember(of: "A") { key, entry in janssonFields.append("\(key)=\(entry.string("h") ?? "-")") }
        var scannedFields: [String] = []
        index.forEachEntry(of: "A") { key, fields in
            scannedFields.append("\(key)=\((fields.first ?? nil) ?? "-")")
        }
        if tree.isObject(forKey: "A") == true && janssonFields != scannedFields { return false }
        return String(decoding: index.tree().serialized(), as: UTF8.self) == String(decoding: tree.serialized(), as: UTF8.self)
    }
}

/// A small deterministic generator, so that a failure can be replayed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
