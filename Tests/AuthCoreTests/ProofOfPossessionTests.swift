import Crypto
import CryptoExtras
import FoundationEssentials
import JSON
import Testing
import TokenCache

@testable import AuthCore

#if canImport(Glibc)
    import Glibc
#endif

/// The PoP signing key (RFC 7638 thumbprint, `req_cnf`), the signed HTTP request as
/// PopTokenGenerator makes it, and the key kept beside the cache sealed under the cache's key.
@Suite struct ProofOfPossessionTests {
    /// RFC 7638 section 3.1's example key and thumbprint.
    @Test func theThumbprintIsRFC7638s() {
        let n =
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        #expect(PopSigningKey.thumbprint([("e", "AQAB"), ("kty", "RSA"), ("n", n)]) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    @Test func theKeyRoundTripsAndNamesItsKid() throws {
        let key = try PopSigningKey.generate()
        let again = try PopSigningKey(derRepresentation: key.derRepresentation)
        #expect(again.keyId == key.keyId && key.keyId.count == 43)
        let cnf = try JSONValue.parse(try #require(Base64URL.decode(key.requestConfirmation)))
        #expect(cnf["kid"] == .string(key.keyId) && cnf["xms_ksl"] == "sw")
        #expect(key.publicJWK["kty"] == "RSA" && key.publicJWK["d"] == nil)
        #expect(throws: (any Error).self) { try PopSigningKey(derRepresentation: [1, 2, 3]) }
    }

    @Test func theSHRIsPopTokenGeneratorsShape() throws {
        let key = try PopSigningKey.generate()
        let target = try PopRequestTarget(method: "post", url: "https://Example.COM:8443/a/b?x=1&y=2#frag", clientClaims: "u=/subs/1")
        let shr = try SignedHttpRequest.make(accessToken: "header.payload.sig", target: target, key: key, now: 1_700_000_000)
        let parts = shr.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONValue.parse(try #require(Base64URL.decode(parts[0])))
        #expect(header["alg"] == "RS256" && header["typ"] == "pop" && header["kid"] == .string(key.keyId))
        let payload = try JSONValue.parse(try #require(Base64URL.decode(parts[1])))
        #expect(payload["at"] == "header.payload.sig" && payload["ts"] == .int(1_700_000_000))
        #expect(payload["m"] == "POST" && payload["u"] == "example.com:8443" && payload["p"] == "/a/b")
        #expect(payload["q"] == [[], "x=1&y=2"] && payload["client_claims"] == "u=/subs/1")
        #expect(payload["nonce"]?.stringValue?.count == 36)  // a random one: the resource gave none
        #expect(payload["cnf"]?["jwk"] == key.publicJWK)
        let jwk = try #require(payload["cnf"]?["jwk"])
        let publicKey = try _RSA.Signing.PublicKey(
            n: try #require(jwk["n"]?.stringValue.flatMap(Base64URL.decode)), e: try #require(jwk["e"]?.stringValue.flatMap(Base64URL.decode)))
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8), padding: .insecurePKCS1v1_5))
        #expect(!publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[0]).utf8), padding: .insecurePKCS1v1_5))
    }

    @Test func hostPathAndNonce() throws {
        let key = try PopSigningKey.generate()
        func payload(_ url: String, nonce: String? = nil) throws -> JSONValue {
            let shr = try SignedHttpRequest.make(
                accessToken: "t", target: try PopRequestTarget(method: "GET", url: url, nonce: nonce), key: key, now: 1)
            return try JSONValue.parse(try #require(Base64URL.decode(shr.split(separator: ".")[1])))
        }
        let plain = try payload("https://graph.microsoft.com:443", nonce: "n-1")
        #expect(plain["u"] == "graph.microsoft.com" && plain["p"] == "/" && plain["q"] == nil && plain["nonce"] == "n-1")
        #expect(try payload("http://127.0.0.1:8080/x?")["u"] == "127.0.0.1:8080")
        #expect(try payload("http://127.0.0.1:8080/x?")["q"] == nil)
        #expect(throws: PopTargetError.url) { try PopRequestTarget(method: "GET", url: "http://example.com/") }
        #expect(throws: PopTargetError.url) { try PopRequestTarget(method: "GET", url: "/relative") }
        #expect(throws: PopTargetError.method) { try PopRequestTarget(method: "GE T", url: "https://a/") }
        #expect(throws: PopTargetError.method) { try PopRequestTarget(method: "", url: "https://a/") }
    }

    /// kubelogin's Azure Arc shape: `u` the resource id, no `m`, `p` or `q`.
    @Test func aResourceIdIsTheSHRsUAlone() throws {
        let arm = "/subscriptions/1/resourceGroups/rg/providers/Microsoft.Kubernetes/connectedClusters/c"
        let target = try PopRequestTarget(resourceId: arm, clientClaims: "u=" + arm)
        let shr = try SignedHttpRequest.make(accessToken: "t", target: target, key: try PopSigningKey.generate(), now: 1)
        let payload = try JSONValue.parse(try #require(Base64URL.decode(shr.split(separator: ".")[1])))
        #expect(payload["u"]?.stringValue == arm && payload["m"] == nil && payload["p"] == nil && payload["q"] == nil)
        #expect(payload["client_claims"]?.stringValue == "u=" + arm && payload["at"] == "t")
        #expect(throws: PopTargetError.resourceId) { try PopRequestTarget(resourceId: "") }
        #expect(throws: PopTargetError.resourceId) { try PopRequestTarget(resourceId: "a b") }
    }

    /// A PoP request takes only a `pop` answer, a bearer request never one; the request's
    /// fields are msal-browser's (`token_type=pop`, `req_cnf`), and the cache key id the kid.
    @Test func aPopRequestTakesOnlyAPopAnswer() throws {
        let key = try PopSigningKey.generate()
        let binding = TokenBinding.proofOfPossession(PopBinding(key: key))
        #expect(binding.fields.map(\.0) == ["token_type", "req_cnf"] && binding.fields.first?.1 == "pop")
        #expect(binding.keyId == key.keyId && binding.tokenType == "pop")
        #expect(RequestedToken.proofOfPossession(PopBinding(key: key)).kind == .proofOfPossession)
        func parse(_ type: String, _ binding: TokenBinding?) throws(AuthError) -> TokenResponse {
            let body = #"{"access_token":"a.b.c","token_type":"\#(type)","expires_in":3600}"#
            guard let json = try? JSONValue.parse(Array(body.utf8)) else { fatalError("test JSON") }
            return try TokenResponse(json: json, binding: binding)
        }
        #expect(try parse("pop", binding).tokenType == "pop")
        #expect(try parse("PoP", binding).tokenType == "PoP")
        #expect(throws: AuthError.self) { try parse("Bearer", binding) }
        #expect(throws: AuthError.self) { try parse("pop", nil) }
    }

    @Test func theKeyIsKeptSealedBesideTheCache() throws {
        let directory = FileManagerless.temporaryDirectory()
        let cache = directory + "/cache.json"
        let encryption = try #require(AESGCMCacheEncryption(key: [UInt8](repeating: 7, count: 32)))
        let first = try PopKeyHolder(file: PopKeyFile(layout: CacheFileLayout(path: cache), encryption: encryption)).key()
        let second = try PopKeyHolder(file: PopKeyFile(layout: CacheFileLayout(path: cache), encryption: encryption)).key()
        #expect(first.keyId == second.keyId)
        let stored = try #require(FileManagerless.read(cache + ".pop-key"))
        #expect(AESGCMCacheEncryption.isSealed(stored))
        #expect(!stored.contains(first.derRepresentation))
        #expect(FileManagerless.mode(cache + ".pop-key") == 0o600)
        // Another key cannot open it: an error, and the file is left as it is (never a new key).
        let other = try #require(AESGCMCacheEncryption(key: [UInt8](repeating: 8, count: 32)))
        #expect(throws: (any Error).self) { try PopKeyHolder(file: PopKeyFile(layout: CacheFileLayout(path: cache), encryption: other)).key() }
        #expect(FileManagerless.read(cache + ".pop-key") == stored)
        // A plaintext cache keeps no key: one per holder.
        #expect(try PopKeyHolder(file: nil).key().keyId != PopKeyHolder(file: nil).key().keyId)
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(_ other: [UInt8]) -> Bool {
        guard other.count <= count else { return false }
        return (0...(count - other.count)).contains { self[$0..<($0 + other.count)].elementsEqual(other) }
    }
}

/// A temporary directory and plain reads, with Glibc only.
private enum FileManagerless {
    static func temporaryDirectory() -> String {
        var template = Array("/tmp/pop-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } }
        return made.map { String(cString: $0) } ?? "/tmp/pop-test-\(getpid())"
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return bytes
    }

    static func mode(_ path: String) -> UInt32 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt32(info.st_mode) & 0o777 : 0
    }
}
