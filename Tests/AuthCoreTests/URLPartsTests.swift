import AuthSeams
import Testing

/// `URLParts` reads its URL on the UTF-8 bytes; these pin what it accepts and how it splits.
@Suite struct URLPartsTests {
    @Test(arguments: [
        ("https://login.microsoftonline.com/common", "https", "login.microsoftonline.com", nil as Int?, "/common"),
        ("HTTPS://Login.Example.COM:8443/a?b=c#d", "https", "login.example.com", 8443, "/a?b=c#d"),
        ("http://127.0.0.1:5000", "http", "127.0.0.1", 5000, ""),
        ("http://[::1]:8080/cb", "http", "::1", 8080, "/cb"),
        ("http://[FE80::1]/x", "http", "fe80::1", nil, "/x"),
        ("https://host?q=1", "https", "host", nil, "?q=1"),
        ("https://host#frag", "https", "host", nil, "#frag"),
        ("https://hôst.example/é", "https", "hôst.example", nil, "/é"),
    ])
    func splits(url: String, scheme: String, host: String, port: Int?, path: String) throws {
        let parts = try #require(URLParts(url))
        #expect(parts.scheme == scheme)
        #expect(parts.host == host)
        #expect(parts.port == port)
        #expect(parts.path == path)
    }

    @Test(arguments: [
        "", "login.microsoftonline.com/common", "ftp://host/x", "https:/host", "https//host", "x:https://host",
        "https://", "https:///path", "https://user@host/", "https://host:99999/", "https://host:port/",
        "http://[::1/x", "http://[::1]x/", "https://ho st/", "https://ho\\st/",
    ])
    func rejects(url: String) {
        #expect(URLParts(url) == nil)
    }

    @Test func keepsTheOriginAndLoopbackRules() throws {
        #expect(try #require(URLParts("http://[::1]:8080/cb")).origin == "http://[::1]:8080")
        #expect(try #require(URLParts("http://127.0.0.1:5000/x")).isSecureOrLoopback)
        #expect(try #require(URLParts("http://localhost/x")).isSecureOrLoopback)
        #expect(try #require(URLParts("http://example.com/x")).isSecureOrLoopback == false)
    }
}
