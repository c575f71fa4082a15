import AuthSeams
import Testing

@testable import Loopback

@Suite("Redirect URI, form decoding, HTTP parsing, pages")
struct ParsingTests {
    @Test("loopback redirect URIs are parsed; port 0 or none means any port")
    func redirectURIs() throws {
        let plain = try RedirectURI(parsing: "http://localhost")
        #expect(plain.port == nil && plain.path == "" && plain.requestPath == "/")
        #expect(plain.concrete(boundPort: 43123) == "http://localhost:43123")
        let fixed = try RedirectURI(parsing: "http://127.0.0.1:8400/auth/callback")
        #expect(fixed.port == 8400 && fixed.requestPath == "/auth/callback")
        #expect(fixed.concrete(boundPort: 8400) == "http://127.0.0.1:8400/auth/callback")
        #expect(try RedirectURI(parsing: "HTTP://LocalHost:0/").port == nil)
        #expect(try RedirectURI(parsing: "HTTP://LocalHost:0/").concrete(boundPort: 1) == "http://LocalHost:1/")
    }

    @Test(
        "non-loopback, https, IPv6, user info, query and bad ports are refused",
        arguments: [
            "https://localhost", "http://example.com", "http://[::1]:80", "http://0.0.0.0",
            "http://user@localhost", "http://localhost?x=1", "http://localhost/#f",
            "http://localhost:", "http://localhost:65536", "http://localhost:-1", "http://localhost/a b",
            "http://", "localhost:8080", "http://localhost.evil.com",
        ])
    func refusedRedirectURIs(uri: String) {
        #expect(throws: LoopbackError.self) { try RedirectURI(parsing: uri) }
    }

    @Test("form decoding: + is a space, %XX bytes, UTF-8, empty pairs skipped")
    func formDecoding() throws {
        let decoded = try FormURLEncoding.decode("code=a%2Bb+c&state=%C3%A9t%C3%A9&&flag&e=")
        #expect(decoded == ["code": "a+b c", "state": "été", "flag": "", "e": ""])
    }

    @Test("form decoding refuses bad escapes, invalid UTF-8 and repeated names")
    func formDecodingFailures() {
        #expect(throws: FormURLEncoding.DecodingError.malformed) { try FormURLEncoding.decode("a=%4") }
        #expect(throws: FormURLEncoding.DecodingError.malformed) { try FormURLEncoding.decode("a=%zz") }
        #expect(throws: FormURLEncoding.DecodingError.malformed) { try FormURLEncoding.decode("a=%FF") }
        #expect(throws: FormURLEncoding.DecodingError.duplicate("state")) { try FormURLEncoding.decode("state=1&state=2") }
    }

    @Test("HTTP parsing: incomplete, complete with body, limits, chunked")
    func httpParsing() {
        let head = "POST /cb?x=1 HTTP/1.1\r\nHost: localhost:1\r\nContent-Length: 5\r\n\r\n"
        #expect(HTTPRequestParser.parse(Array("GET / HTTP/1.1\r\nHost: a".utf8)) == .incomplete)
        #expect(HTTPRequestParser.parse(Array((head + "ab").utf8)) == .incomplete)
        guard case .complete(let request) = HTTPRequestParser.parse(Array((head + "a=b&c").utf8)) else {
            Issue.record("not complete")
            return
        }
        #expect(request.method == "POST" && request.path == "/cb" && request.query == "x=1")
        #expect(request.header("HOST") == "localhost:1" && request.body == Array("a=b&c".utf8))
        let chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(HTTPRequestParser.parse(Array(chunked.utf8)) == .invalid(.notImplemented))
        let huge = "POST / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n"
        #expect(HTTPRequestParser.parse(Array(huge.utf8)) == .invalid(.payloadTooLarge))
        let long = "GET /" + String(repeating: "a", count: 20_000)
        #expect(HTTPRequestParser.parse(Array(long.utf8)) == .invalid(.headersTooLarge))
        #expect(HTTPRequestParser.parse(Array("GET http://x/ HTTP/1.1\r\n\r\n".utf8)) == .invalid(.badRequest))
        #expect(HTTPRequestParser.parse(Array("GET / HTTP/2.0\r\n\r\n".utf8)) == .invalid(.versionNotSupported))
        #expect(HTTPRequestParser.parse(Array("GET / HTTP/1.1\r\nBad Header: x\r\n\r\n".utf8)) == .invalid(.badRequest))
    }

    @Test("HTML escaping of everything that came from the request")
    func htmlEscaping() {
        #expect(
            RedirectPages.escapeHTML(#"<script>alert("x&y")</script>'"#)
                == "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;&#39;")
        let page = RedirectPages.failure(error: "<b>bad</b>", description: "<img src=x onerror=alert(1)>", subcode: "\"cancel\"")
        #expect(!page.body.contains("<b>") && !page.body.contains("<img"))
        #expect(page.body.contains("&lt;b&gt;bad&lt;/b&gt;") && page.body.contains("&quot;cancel&quot;"))
    }

    @Test("state comparison")
    func stateComparison() {
        #expect(RedirectRequestEvaluator.constantTimeEquals("abc", "abc"))
        #expect(!RedirectRequestEvaluator.constantTimeEquals("abc", "abd"))
        #expect(!RedirectRequestEvaluator.constantTimeEquals("abc", "abcd"))
        #expect(!RedirectRequestEvaluator.constantTimeEquals("", "a"))
    }

    @Test("response description never shows the code")
    func responseDescription() {
        let response = AuthorizationResponse(parameters: ["code": "SECRET-CODE", "state": "s", "client_info": "CI"])
        #expect(!"\(response)".contains("SECRET-CODE") && !"\(response)".contains("CI,"))
        #expect(response.code == "SECRET-CODE" && response.clientInfo == "CI" && !response.isError)
    }

    @Test("$BROWSER lists: ':'-separated, quoted words, %s or URL appended")
    func browserCommands() {
        let commands = BrowserCommand.parseList("firefox --new-window %s::'/opt/my browser/run' -x:w3m")
        #expect(
            commands == [
                .success(BrowserCommand(words: ["firefox", "--new-window", "%s"])),
                .success(BrowserCommand(words: ["/opt/my browser/run", "-x"])),
                .success(BrowserCommand(words: ["w3m"])),
            ])
        let url = "https://h/a?b=1;c=$(x)&d='e' \"f\""
        #expect(BrowserCommand(words: ["b", "--url=%s", "%s"]).arguments(for: url) == ["b", "--url=" + url, url])
        #expect(BrowserCommand(words: ["b", "-x"]).arguments(for: url) == ["b", "-x", url])
        #expect(BrowserCommand.split(#"a "b \"c\" \d" 'e f'\ g"#) == ["a", #"b "c" \d"#, "e f g"])
        #expect(BrowserCommand.split("a 'b") == nil)
        #expect(BrowserCommand.parseList(" : ").isEmpty)
    }
}
