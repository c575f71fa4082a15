import Testing

@testable import Sidecar

@Suite struct RedactorTests {
    @Test func masksJWTs() {
        let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
        let line = Redactor.redact("got token \(jwt) for user")
        #expect(!line.contains("eyJzdWIi"))
        #expect(line.contains("[redacted-jwt]"))
        #expect(line.hasSuffix("for user"))
    }

    @Test(arguments: [
        "code=0.AXYZ-abc_123&state=s1",
        #"{"refresh_token":"1.AbCdEf","scope":"user.read"}"#,
        "Authorization: Bearer abc.def",
        "client_secret=hunter2",
    ])
    func masksSecretValues(text: String) {
        let redacted = Redactor.redact(text)
        for secret in ["0.AXYZ", "1.AbCdEf", "abc.def", "hunter2"] { #expect(!redacted.contains(secret)) }
        #expect(redacted.contains("[redacted]"))
    }

    @Test(arguments: [
        "azd-auth token not served code=NotSignedInError", "code=GetTokenError", #"{"code":"invalid_grant"}"#,
        "https://login.microsoftonline.com/error?code=50126",
    ])
    func leavesAnErrorsNameUnderCodeAlone(text: String) {
        #expect(Redactor.redact(text) == text)
    }

    @Test(arguments: [
        "code=1.MOCK.abc", "code=M.C5_BAY.2.U.abcd", "code=abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklm", "code=ABCDEFGHJ",
    ])
    func masksACodeThatIsNotAName(text: String) {
        #expect(Redactor.redact(text) == "code=[redacted]")
    }

    @Test func leavesOrdinaryTextAlone() {
        let text = "request id=3 method=acquireTokenSilent scopes=user.read state=xyz"
        #expect(Redactor.redact(text) == text)
    }
}
