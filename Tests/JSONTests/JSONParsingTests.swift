import Testing

@testable import JSON

@Suite struct JSONParsingTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue.parse(#"{"a":null,"b":true,"c":-7,"d":1.5,"e":"x","f":[1,{}]}"#)
        #expect(value["a"] == .null)
        #expect(value["b"]?.boolValue == true)
        #expect(value["c"]?.intValue == -7)
        #expect(value["d"]?.numberValue == 1.5)
        #expect(value["e"]?.stringValue == "x")
        #expect(value["f"] == [1, .object([:])])
    }

    @Test func keepsIntegersExactAtTheInt64Limits() throws {
        #expect(try JSONValue.parse("9223372036854775807") == .int(.max))
        #expect(try JSONValue.parse("-9223372036854775808") == .int(.min))
    }

    @Test func rejectsIntegersOutsideInt64() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse("9223372036854775808") }
    }

    @Test func rejectsDuplicateKeys() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"a":1,"a":2}"#) }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]  // "\xC3(" : a broken two-byte sequence
        #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes) }
    }

    @Test func rejectsTrailingGarbageAndEmptyInput() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse("{} x") }
        #expect(throws: JSONParseError.self) { try JSONValue.parse("") }
        #expect(throws: JSONParseError.self) { try JSONValue.parse("   ") }
    }

    @Test func boundsNesting() throws {
        let ok = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        #expect(try JSONValue.parse(ok, maxDepth: 10) != .null)
        let deep = String(repeating: "[", count: 11) + String(repeating: "]", count: 11)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(deep, maxDepth: 10) }
        let hostile = String(repeating: "[", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(hostile) }
    }

    @Test(arguments: [#"{"id":4"#, #"{"id":true"#, #"{"id":null"#, #"{"id":"x"#, #"{"#])
    func rejectsARawNULAnywhere(prefix: String) {
        let bytes = Array(prefix.utf8) + [0] + Array(#","a":1}"#.utf8)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x34, 0]) }  // "4\0"
    }

    @Test func keepsNULInsideStringValuesButRejectsItInKeys() throws {
        let value = try JSONValue.parse(#"{"k":"a\u0000b"}"#)
        #expect(value["k"]?.stringValue == "a\u{0}b")
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"k\u0000":1}"#) }
    }
}

@Suite struct JSONSerializationTests {
    @Test func serializesCompactlyInInsertionOrder() {
        let value: JSONValue = ["z": 1, "a": [true, nil, "s"], "m": ["x": 2.5]]
        #expect(value.jsonText == #"{"z":1,"a":[true,null,"s"],"m":{"x":2.5}}"#)
    }

    @Test func escapesStrings() {
        let value: JSONValue = .string("q\"\\\n\u{1}é\u{0}")
        #expect(value.jsonText == #""q\"\\\n\u0001é\u0000""#)
    }

    @Test func roundTripsUnicodeAndExtremes() throws {
        let value: JSONValue = ["emoji": "🙂", "max": .int(.max), "min": .int(.min), "empty": "", "obj": [:], "arr": []]
        #expect(try JSONValue.parse(value.serialized()) == value)
    }

    @Test func writesNonFiniteNumbersAsNull() {
        #expect(JSONValue.double(.nan).jsonText == "null")
    }
}

@Suite struct JSONObjectTests {
    @Test func removesAndReplacesMembersKeepingOrder() {
        var object: JSONObject = ["a": 1, "b": 2, "c": 3]
        object["b"] = nil
        object["a"] = 9
        object["d"] = 4
        #expect(object.keys == ["a", "c", "d"])
        #expect(object["a"] == 9)
        #expect(JSONValue.object(object).jsonText == #"{"a":9,"c":3,"d":4}"#)
    }

    @Test func comparesIgnoringOrder() {
        let ab: JSONObject = ["a": 1, "b": 2]
        let ba: JSONObject = ["b": 2, "a": 1]
        #expect(ab == ba)
    }
}
