import Testing

@testable import JSON

/// ``JSONTree``: a document changed in place, two levels deep, without converting it all.
@Suite struct JSONTreeTests {
    let text = #"{"A":{"k1":{"home_account_id":"H","n":1},"k2":{"x":[1,2]}},"B":[true],"C":"c"}"#

    @Test func readsMembersAndEntriesWithoutConvertingTheRest() throws {
        let tree = try JSONTree(parsingObject: Array(text.utf8))
        #expect(tree.keys == ["A", "B", "C"])
        #expect(tree.isObject(forKey: "A") == true && tree.isObject(forKey: "B") == false && tree.isObject(forKey: "Z") == nil)
        var seen: [String] = []
        tree.forEachMember(of: "A") { key, entry in seen.append("\(key)=\(entry.string("home_account_id") ?? "-")") }
        #expect(seen == ["k1=H", "k2=-"])
        #expect(tree.member("k2", of: "A") == ["x": [1, 2]])
        #expect(tree.value(forKey: "C") == "c")
    }

    @Test func changesInPlaceKeepingOrderAndSerializesCompactly() throws {
        let tree = try JSONTree(parsingObject: Array(text.utf8))
        tree.setMember("k1", of: "A", to: nil)
        tree.setMember("k3", of: "A", to: ["y": "z"])
        tree.setMember("n", of: "New", to: 5)
        tree.setValue(nil, forKey: "B")
        #expect(
            String(decoding: tree.serialized(), as: UTF8.self)
                == #"{"A":{"k2":{"x":[1,2]},"k3":{"y":"z"}},"C":"c","New":{"n":5}}"#)
    }

    @Test func aCopyIsIndependent() throws {
        let tree = try JSONTree(parsingObject: Array(text.utf8))
        let copy = tree.copy()
        tree.setValue(nil, forKey: "A")
        #expect(copy.isObject(forKey: "A") == true)
    }

    @Test func refusesWhatIsNotAStrictObject() {
        for bad in ["[1]", "\"s\"", #"{"a":1,"a":2}"#, #"{"a":"#, ""] {
            #expect(throws: JSONParseError.self, "\(bad)") { _ = try JSONTree(parsingObject: Array(bad.utf8)) }
        }
        let error = #expect(throws: JSONParseError.self) { _ = try JSONTree(parsingObject: Array("[1]".utf8)) }
        #expect(error?.message == "the top level is a JSON array, not an object")
    }
}
