import JSON
import Testing

/// The shape scan counts what the parser would build, on the raw text.
@Suite struct JSONShapeLimitsTests {
    private func violation(_ text: String, maxItems: Int = 100) -> JSONShapeViolation? {
        JSONShapeLimits(maxObjectMembers: 3, maxRootArrayElements: 2, maxItems: maxItems).violation(in: Array(text.utf8)[...])
    }

    @Test(arguments: [
        #"{"a":1,"b":2,"c":3}"#, #"[{"a":[1,2,3,4]},{}]"#, #"{"a":"x:y,z","b":"\":\\\"","c":{"d":1,"e":2,"f":3}}"#,
        #"  [ 1 , "two" ]  "#, "123", #""just a string with : and , and [""#, "[]", "{}",
    ])
    func passesWhatIsWithinTheLimits(_ text: String) {
        #expect(violation(text) == nil)
    }

    @Test func countsTheMembersOfEachObject() {
        #expect(violation(#"{"a":1,"b":2,"c":3,"d":4}"#) == .objectMembers(limit: 3))
        #expect(violation(#"[{"a":{"b":1,"c":2,"d":3,"e":4}}]"#) == .objectMembers(limit: 3))
        // Colons and commas inside strings, escaped quotes included, are not structure.
        #expect(violation(#"{"a:b:c:d":"e,f:g\":h:i"}"#) == nil)
    }

    @Test func countsTheElementsOfTheRootArrayOnly() {
        #expect(violation("[1,2,3]") == .rootArrayElements(limit: 2))
        #expect(violation(#"[[1,2,3],{"a":[4,5,6]}]"#) == nil)
        #expect(violation(#"[{}, [], "x"]"#) == .rootArrayElements(limit: 2))
    }

    @Test func countsEveryItemOfTheText() {
        #expect(violation("[[[[[[[[[[[]]]]]]]]]]]", maxItems: 10) == .items(limit: 10))
        // 2 keys, 6 numbers, 2 arrays and the object: 11 items.
        #expect(violation(#"{"a":[1,2,3],"b":[4,5,6]}"#, maxItems: 10) == .items(limit: 10))
        #expect(violation(#"{"a":[1,2,3],"b":[4,5]}"#, maxItems: 10) == nil)
        #expect(violation(#"["a b","c"]"#, maxItems: 3) == nil)
        #expect(violation("[true,-1.5e3]", maxItems: 2) == .items(limit: 2))
    }

    @Test func aNestingTooDeepToTrackIsLeftToTheParser() {
        let deep = String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
        let lenient = JSONShapeLimits(maxObjectMembers: 3, maxRootArrayElements: 2, maxItems: 1_000_000)
        #expect(lenient.violation(in: Array(deep.utf8)[...]) == nil)
        #expect((try? JSONValue.parse(deep)) == nil)
    }

    @Test func theMessageLimits() {
        #expect(JSONShapeLimits.message == JSONShapeLimits(maxObjectMembers: 1_000, maxRootArrayElements: 1_000, maxItems: 100_000))
    }
}
