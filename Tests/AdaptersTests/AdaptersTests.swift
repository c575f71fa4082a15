import JSON
import Testing

@testable import Adapters

@Suite struct AzAccessTokenTests {
    @Test func hasAzsFieldsAndTypes() throws {
        let json = AzAccessToken.json(
            accessToken: "at", expiresOn: 1_700_000_000, tenant: "tid", tokenType: "Bearer",
            subscription: nil)
        let object = try #require(json.objectValue)
        #expect(Set(object.keys) == ["accessToken", "expiresOn", "expires_on", "tenant", "tokenType"])
        #expect(json["expires_on"]?.intValue == 1_700_000_000)
        let expiresOn = try #require(json["expiresOn"]?.stringValue)
        #expect(expiresOn.wholeMatch(of: /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}/) != nil, "\(expiresOn)")
        #expect(
            AzAccessToken.json(accessToken: "at", expiresOn: 0, tenant: "t", tokenType: "Bearer", subscription: "sub")["subscription"]?.stringValue
                == "sub")
    }

    @Test func aResourceMeansItsDefaultScope() {
        #expect(AzAccessToken.scope(forResource: "https://graph.microsoft.com") == "https://graph.microsoft.com/.default")
        #expect(AzAccessToken.scope(forResource: "https://management.azure.com/") == "https://management.azure.com/.default")
    }
}

@Suite struct GitCredentialTests {
    @Test func parsesGitsDescription() throws {
        let input = Array("protocol=https\nhost=dev.azure.com\npath=org/repo\ncapability[]=authtype\n\nignored=after-blank\n".utf8)
        let attributes = try GitCredential.parse(input)
        #expect(attributes == ["protocol": "https", "host": "dev.azure.com", "path": "org/repo", "capability[]": "authtype"])
        #expect(try GitCredential.parse(Array("protocol=https\r\nhost=x\r\n".utf8))["host"] == "x")
    }

    @Test func refusesGarbageHugeInputAndUnknownActions() {
        #expect(throws: GitCredential.Failure.malformed(line: 2)) { try GitCredential.parse(Array("host=x\ngarbage\n".utf8)) }
        #expect(throws: GitCredential.Failure.malformed(line: 1)) { try GitCredential.parse(Array("=x\n".utf8)) }
        #expect(throws: GitCredential.Failure.tooLarge) { try GitCredential.parse([UInt8](repeating: 65, count: 70_000)) }
        #expect(throws: GitCredential.Failure.unknownAction("steal")) { try GitCredential.action("steal") }
    }

    @Test func mapsOnlyConfiguredHttpsHosts() {
        let hosts = GitCredentialHosts.default
        #expect(hosts.scope(protocol: "https", host: "dev.azure.com") == GitCredentialHosts.azureDevOpsScope)
        #expect(hosts.scope(protocol: "https", host: "contoso.visualstudio.com:443") == GitCredentialHosts.azureDevOpsScope)
        #expect(hosts.scope(protocol: "https", host: "visualstudio.com") == nil)
        #expect(hosts.scope(protocol: "https", host: "evilvisualstudio.com") == nil)
        #expect(hosts.scope(protocol: "http", host: "dev.azure.com") == nil)
        #expect(hosts.scope(protocol: "https", host: "github.com") == nil)
        #expect(hosts.scope(protocol: "https", host: "dev.azure.com.evil.example") == nil)
    }

    @Test func answersUsernamePasswordAndExpiry() {
        #expect(GitCredential.answer(username: "u", token: "t", expiresOn: 5) == "username=u\npassword=t\npassword_expiry_utc=5\n")
    }

    @Test func neverAnswersAValueThatWouldSetAnotherAttribute() {
        #expect(GitCredential.answer(username: "u\nhost=evil", token: "t", expiresOn: 5) == nil)
        #expect(GitCredential.answer(username: "u", token: "t\r\nusername=x", expiresOn: 5) == nil)
        #expect(GitCredential.answer(username: "u", token: "t\0", expiresOn: 5) == nil)
        #expect(GitCredential.answer(username: "", token: "t", expiresOn: 5) == nil)
        #expect(throws: GitCredential.Failure.malformed(line: 1)) { try GitCredential.parse(Array("host=a\0b\n".utf8)) }
    }
}

@Suite struct ExecCredentialTests {
    @Test func readsKubectlsExecInfo() throws {
        #expect(try ExecCredential.execInfo(nil) == .init())
        let beta = try ExecCredential.execInfo(
            #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":true}}"#)
        #expect(beta.apiVersion == "client.authentication.k8s.io/v1beta1" && beta.interactive)
        #expect(throws: ExecCredential.Failure.malformed) { try ExecCredential.execInfo("{not json") }
        #expect(throws: ExecCredential.Failure.unsupportedVersion("x/v9")) { try ExecCredential.execInfo(#"{"apiVersion":"x/v9"}"#) }
    }

    @Test func printsTheCredentialWithAnRFC3339Expiry() {
        let json = ExecCredential.json(token: "t", expiresOn: 1_700_000_000, apiVersion: ExecCredential.versions[0])
        #expect(json["kind"]?.stringValue == "ExecCredential")
        #expect(json["status"]?["token"]?.stringValue == "t")
        #expect(json["status"]?["expirationTimestamp"]?.stringValue == "2023-11-14T22:13:20Z")
    }

    @Test func readsAnIDTokensExpiry() {
        // {"aud":"c","exp":1700000000} in base64url (no padding), between a header and a signature
        #expect(JWTClaims.expiry("eyJhbGciOiJub25lIn0.eyJhdWQiOiJjIiwiZXhwIjoxNzAwMDAwMDAwfQ.c2ln") == 1_700_000_000)
        #expect(JWTClaims.expiry("eyJhbGciOiJub25lIn0.eyJhdWQiOiJjIn0.c2ln") == nil)  // no exp
        #expect(JWTClaims.expiry("not-a-jwt") == nil)
        #expect(JWTClaims.expiry("a.!!!.b") == nil)
        #expect(JWTClaims.payload("a.WzFd.b") == nil)  // [1]: not an object
    }
}

@Suite struct ManagedIdentityProtocolTests {
    let good = ["x-identity-header": "s3cret"]

    func status(_ result: Result<ManagedIdentityProtocol.TokenRequest, ReplyError>) -> Int {
        switch result {
        case .success: 200
        case .failure(let refused): refused.reply.status
        }
    }

    @Test func servesTheAppServiceRequestShape() throws {
        let result = ManagedIdentityProtocol.evaluate(
            method: "GET", target: "/msi/token?api-version=2019-08-01&resource=https%3A%2F%2Fgraph.microsoft.com",
            headers: good, secret: "s3cret")
        #expect(try result.get().scope == "https://graph.microsoft.com/.default")
        let reply = ManagedIdentityProtocol.tokenReply(token: "t", expiresOn: 9, tokenType: "Bearer", resource: "r", clientId: "c")
        #expect(reply.body["expires_on"]?.stringValue == "9" && reply.body["access_token"]?.stringValue == "t")
    }

    @Test func refusesWithTheShapeTheSDKsRead() {
        let cases: [(String, String, [String: String], Int)] = [
            ("GET", "/msi/token?resource=r", [:], 401),
            ("GET", "/msi/token?resource=r", ["x-identity-header": "s3cre"], 401),
            ("GET", "/msi/token?resource=r", ["x-identity-header": "s3cret!"], 401),
            ("POST", "/msi/token?resource=r", good, 405),
            ("GET", "/other", good, 404),
            ("GET", "/msi/token", good, 400),
            ("GET", "/msi/token?resource=r&api-version=2017-09-01", good, 401),  // 2017's header is `secret`
            ("GET", "/msi/token?resource=r&api-version=2019-08-01", ["secret": "s3cret"], 401),
            ("GET", "/msi/token?resource=r&api-version=2017-09-01", ["secret": "s3cre"], 401),
            ("GET", "/msi/token?resource=r&api-version=2017-09-01&clientid=c", ["secret": "s3cret"], 400),
            ("GET", "/msi/token?api-version=2017-09-01", ["secret": "s3cret"], 400),
            ("GET", "/msi/token?resource=r&api-version=2018-02-01", good, 400),
            ("GET", "/msi/token?resource=r", good, 400),  // api-version is required
            ("GET", "/msi/token?api-version=2019-08-01&resource=r&client_id=c", good, 400),
            ("GET", "/msi/token?api-version=2019-08-01&resource=r&mi_res_id=m", good, 400),
            ("GET", "/msi/token?api-version=2019-08-01&resource=r&object_id=o", good, 400),
            ("GET", "/msi/token?resource=%zz", good, 400),
        ]
        for (method, target, headers, expected) in cases {
            #expect(
                status(ManagedIdentityProtocol.evaluate(method: method, target: target, headers: headers, secret: "s3cret")) == expected,
                "\(method) \(target) \(headers)")
        }
        let refused = ManagedIdentityProtocol.Reply.error(401, "no")
        #expect(refused.body["statusCode"]?.intValue == 401 && refused.body["message"]?.stringValue == "no")
    }

    @Test func servesTheOlderSDKsProtocolWithADate() throws {
        let result = ManagedIdentityProtocol.evaluate(
            method: "GET", target: "/msi/token?api-version=2017-09-01&resource=https%3A%2F%2Fvault.azure.net",
            headers: ["secret": "s3cret"], secret: "s3cret")
        let request = try result.get()
        #expect(request.version == .legacy && request.scope == "https://vault.azure.net/.default")
        let reply = ManagedIdentityProtocol.tokenReply(
            token: "t", expiresOn: 1_561_003_078, tokenType: "Bearer", resource: "r", clientId: "c", version: .legacy)
        #expect(reply.body["expires_on"]?.stringValue == "06/20/2019 03:57:58 +00:00" && reply.body["client_id"] == nil)
    }

    @Test func legacyDatesAreUTCCalendarDates() {
        #expect(ManagedIdentityProtocol.legacyDate(0) == "01/01/1970 00:00:00 +00:00")
        #expect(ManagedIdentityProtocol.legacyDate(951_782_400) == "02/29/2000 00:00:00 +00:00")
        #expect(ManagedIdentityProtocol.legacyDate(1_798_761_599) == "12/31/2026 23:59:59 +00:00")
        #expect(ManagedIdentityProtocol.legacyDate(4_107_542_400) == "03/01/2100 00:00:00 +00:00")
        #expect(ManagedIdentityProtocol.legacyDate(-1) == "12/31/1969 23:59:59 +00:00")
        #expect(ManagedIdentityProtocol.legacyDate(.max) == "12/31/9999 23:59:59 +00:00")
        #expect(ManagedIdentityProtocol.legacyDate(.min) == "01/01/1 00:00:00 +00:00")
    }

    @Test func secretsAre32RandomBytesInHex() {
        let one = ManagedIdentityProtocol.newSecret()
        let two = ManagedIdentityProtocol.newSecret()
        #expect(one.count == 64 && one.allSatisfy(\.isHexDigit) && one != two)
    }

}
