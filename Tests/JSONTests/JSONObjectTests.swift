import Testing

@testable import JSON

/// ``JSONObject``: members in insertion order, looked up alike below and above the size at
/// which it starts indexing its keys; equality and hashing ignore order.
@Suite struct JSONObjectOrderAndLookupTests {
    private func object(_ count: Int, reversed: Bool = false) -> JSONObject {
        let indices = reversed ? Array((0..<count).reversed()) : Array(0..<count)
        return JSONObject(indices.map { ("k\($0)", JSONValue.int(Int64($0))) })
    }

    @Test(arguments: [0, 1, JSONObject.indexThreshold, JSONObject.indexThreshold + 1, 100])
    func keepsOrderAndFindsEveryMember(count: Int) {
        var members = object(count)
        #expect(members.count == count)
        #expect(members.keys == (0..<count).map { "k\($0)" })
        #expect(Array(members).map(\.key) == members.keys)
        for index in 0..<count { #expect(members["k\(index)"] == .int(Int64(index))) }
        #expect(members["absent"] == nil)

        members["k0"] = .string("again")  // a repeated key keeps its first position
        if count > 0 { #expect(members.keys.first == "k0" && members["k0"] == .string("again")) }
        members["new"] = .bool(true)
        #expect(members.keys.last == "new" && members["new"] == .bool(true))
        members["k1"] = nil
        #expect(members["k1"] == nil)
        #expect(!members.keys.contains("k1"))
        for index in 2..<max(count, 2) { #expect(members["k\(index)"] == .int(Int64(index))) }
        #expect(members["new"] == .bool(true))
        members["absent"] = nil
        #expect(members.count == max(count, 1) + 1 - (count > 1 ? 1 : 0))
    }

    @Test(arguments: [3, JSONObject.indexThreshold + 5])
    func equalityAndHashIgnoreOrder(count: Int) {
        let forward = object(count)
        let backward = object(count, reversed: true)
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
        var changed = backward
        changed["k1"] = .int(-1)
        #expect(forward != changed)
        var longer = forward
        longer["extra"] = .null
        #expect(forward != longer)
        #expect(Set([forward, backward]).count == 1)
    }

    @Test func aRepeatedKeyInTheMembersKeepsItsFirstPlaceAndLastValue() {
        let members = JSONObject([("a", .int(1)), ("b", .int(2)), ("a", .int(3))])
        #expect(members.keys == ["a", "b"])
        #expect(members["a"] == .int(3))
    }
}
