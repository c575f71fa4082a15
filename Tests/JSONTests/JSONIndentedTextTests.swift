import Testing

@testable import JSON

/// `indentedText` is Python's `json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)`,
/// byte for byte (the expected text below is what Python 3.11 printed for the same value).
@Suite struct JSONIndentedTextTests {
    @Test func isPythonsIndentedSortedText() {
        let value: JSONValue = [
            "z": [1, -2, [:]],
            "é": "café \u{1b}[0m",
            "a": ["lit": "\\u001B", "ctl": "\u{01}\u{7f}\t\n\u{08}\u{0c}\r\"", "b": true, "n": nil, "e": []],
        ]
        let python =
            "{\n  \"a\": {\n    \"b\": true,\n    \"ctl\": \"\\u0001\u{7f}\\t\\n\\b\\f\\r\\\"\",\n    \"e\": [],\n"
            + "    \"lit\": \"\\\\u001B\",\n    \"n\": null\n  },\n  \"z\": [\n    1,\n    -2,\n    {}\n  ],\n"
            + "  \"é\": \"café \\u001b[0m\"\n}"
        #expect(value.indentedText(spaces: 2) == python)
    }

    @Test func scalarsAndEmptyContainersStandAlone() {
        #expect(JSONValue.string("x").indentedText() == "\"x\"")
        #expect(JSONValue.array([]).indentedText() == "[]")
        #expect(JSONValue.object([:]).indentedText() == "{}")
        #expect(JSONValue.null.indentedText() == "null")
    }

    @Test func onlyTheHexDigitsOfUnicodeEscapesChangeCase() {
        var text = Array(#""\u001B \\u00AB \\\u00AB ABC""#.utf8)
        JSONValue.lowercaseUnicodeEscapes(&text)
        #expect(String(decoding: text, as: UTF8.self) == #""\u001b \\u00AB \\\u00ab ABC""#)
    }
}
