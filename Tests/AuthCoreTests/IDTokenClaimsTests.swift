import JSON
import Testing

@testable import AuthCore

/// An ID token's claims as its payload's text: read claim by claim, parsed whole on demand,
/// handed out as they are only when checked and on one line.
@Suite struct IDTokenClaimsTests {
    private func claims(_ text: String) -> IDTokenClaims? { IDTokenClaims(json: Array(text.utf8)) }

    @Test func readsClaimsFromTheTextAsJanssonParsesThem() throws {
        let text = #"{"aud":"app","tid":"t-1","name":"Ren\u00e9e","iat":1795681767,"roles":["a"],"x":{"y":null}}"#
        let scanned = try #require(claims(text))
        #expect(scanned.verbatimText == Array(text.utf8))
        #expect(scanned["tid"]?.stringValue == "t-1")
        #expect(scanned["name"]?.stringValue == "Ren\u{e9}e")
        #expect(scanned["iat"] == .int(1_795_681_767))
        #expect(scanned["missing"] == nil)
        let parsed = try #require(try JSONValue.parse(Array(text.utf8)).objectValue)
        #expect(scanned.object == parsed)
        #expect(scanned == IDTokenClaims(parsed))
        #expect(scanned != IDTokenClaims(["aud": .string("app")]))
    }

    @Test func textOnSeveralLinesIsNotHandedOutAsItIs() throws {
        let text = "{\"aud\":\"app\",\r\n  \"tid\":\"t\"}"
        let scanned = try #require(claims(text))
        #expect(scanned.verbatimText == nil)
        #expect(scanned["tid"]?.stringValue == "t")
        #expect(try #require(claims(#"{ "aud" : "app" }"#)).verbatimText == Array(#"{ "aud" : "app" }"#.utf8))
    }

    @Test func textTheScannerLeavesToJanssonIsParsed() throws {
        let escapedKey = try #require(claims(#"{"t\u0069d":"t"}"#))  // the scanner gives up on escaped keys
        #expect(escapedKey["tid"]?.stringValue == "t")
        #expect(escapedKey.verbatimText == nil)
        #expect(IDTokenClaims(["tid": .string("t")]).verbatimText == nil)
    }

    @Test func refusesWhatIsNotAJSONObject() {
        for text in ["", "[1]", "\"x\"", "{\"a\":}", "{\"a\":1", "{\"a\":1}x", "{\"a\":1,\"a\":2}x", "\u{FF}"] {
            #expect(claims(text) == nil, "\(text)")
        }
    }
}
