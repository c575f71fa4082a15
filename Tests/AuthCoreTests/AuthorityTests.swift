import Testing
import AuthTestSupport
@testable import AuthCore

@Suite struct AuthorityTests {
    @Test(arguments: [
        ("https://login.microsoftonline.com/common", Authority.Kind.aad, "common", nil as String?, "https://login.microsoftonline.com/common"),
        ("https://login.microsoftonline.com/contoso.onmicrosoft.com/", .aad, "contoso.onmicrosoft.com", nil, "https://login.microsoftonline.com/contoso.onmicrosoft.com"),
        ("https://contoso.b2clogin.com/tfp/contoso.onmicrosoft.com/B2C_1_SignUpSignIn", .b2c, "contoso.onmicrosoft.com", "b2c_1_signupsignin", "https://contoso.b2clogin.com/tfp/contoso.onmicrosoft.com/B2C_1_SignUpSignIn"),
        ("https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_edit", .b2c, "contoso.onmicrosoft.com", "b2c_1_edit", "https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_edit"),
        ("https://contoso.ciamlogin.com/", .ciam, "contoso.onmicrosoft.com", nil, "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
        ("https://contoso.ciamlogin.com/aaaa-bbbb", .ciam, "aaaa-bbbb", nil, "https://contoso.ciamlogin.com/aaaa-bbbb"),
        ("http://127.0.0.1:8443/common", .aad, "common", nil, "http://127.0.0.1:8443/common"),
    ])
    func parsesEveryForm(text: String, kind: Authority.Kind, tenant: String, policy: String?, url: String) throws {
        let authority = try Authority(text)
        #expect(authority.kind == kind)
        #expect(authority.tenant == tenant)
        #expect(authority.policy == policy)
        #expect(authority.url == url)
        #expect(authority.metadataURL == url + "/v2.0/.well-known/openid-configuration")
    }

    @Test func refusesInsecureAndPathlessAuthorities() {
        #expect(throws: AuthError.self) { try Authority("http://login.microsoftonline.com/common") }
        #expect(throws: AuthError.self) { try Authority("https://login.microsoftonline.com") }
        #expect(throws: AuthError.self) { try Authority("login.microsoftonline.com/common") }
    }

    @Test func trustsWellKnownAndListedHostsOnly() throws {
        let trust = AuthorityTrust(knownAuthorities: ["contoso.b2clogin.com", "https://127.0.0.1:9443"])
        try trust.check(try Authority("https://login.microsoftonline.com/common"))
        try trust.check(try Authority("https://contoso.b2clogin.com/tfp/t/B2C_1_x"))
        try trust.check(try Authority("https://127.0.0.1:9443/common"))
        try trust.check(try Authority("https://contoso.ciamlogin.com/"))
        #expect(throws: AuthError.self) { try trust.check(try Authority("https://evil.example.com/common")) }
        #expect(throws: AuthError.self) { try trust.check(try Authority("https://other.b2clogin.com/tfp/t/B2C_1_x")) }
    }
}

@Suite struct PrimitivesTests {
    @Test func computesThePKCEChallengeOfRFC7636AppendixB() {
        #expect(PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let fresh = PKCE()
        #expect(fresh.verifier.count == 43)
        #expect(PKCE().verifier != fresh.verifier)
    }

    @Test func roundTripsBase64URL() {
        for length in 0..<20 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + 11) % 256) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.decode("a*b") == nil)
    }

    @Test func readsIDTokenClaimsAndClientInfo() throws {
        let token = try IDToken(raw: Tokens.jwt(#"{"oid":"o","tid":"t","emails":["b2c@x.com"],"nonce":"n"}"#))
        #expect(token.objectId == "o")
        #expect(token.username == "b2c@x.com")
        #expect(token.nonce == "n")
        #expect(throws: AuthError.self) { try IDToken(raw: "not-a-jwt") }
        #expect(try ClientInfo(raw: Tokens.clientInfo).homeAccountId == "oid-1.tid-1")
    }

    @Test func findsDeclinedScopes() {
        #expect(Scopes.declined(requested: ["User.Read", "Mail.Read", "openid"], granted: ["user.read", "profile"]) == ["Mail.Read"])
        #expect(Scopes.decorated(["User.Read", "openid"]) == ["User.Read", "openid", "profile", "offline_access"])
    }

    @Test func mergesClaimsWithClientCapabilities() throws {
        let merged = try Scopes.mergedClaims(#"{"access_token":{"nbf":{"essential":true}}}"#, capabilities: ["cp1"])
        #expect(merged == #"{"access_token":{"nbf":{"essential":true},"xms_cc":{"values":["cp1"]}}}"#)
        #expect(try Scopes.mergedClaims(nil, capabilities: []) == nil)
        #expect(throws: AuthError.self) { try Scopes.mergedClaims("[1]", capabilities: []) }
    }

    @Test func mapsOAuthErrorsToKinds() throws {
        func kind(_ json: String) throws -> AuthError.Kind {
            OAuthErrorResponse.authError(json: try .parse(json), httpStatus: 400, retryAfter: nil).kind
        }
        #expect(try kind(#"{"error":"invalid_grant","error_description":"AADSTS700082: expired"}"#) == .interactionRequired)
        #expect(try kind(#"{"error":"interaction_required","suberror":"basic_action"}"#) == .interactionRequired)
        #expect(try kind(#"{"error":"invalid_grant","suberror":"protection_policy_required"}"#) == .serverProtectionPoliciesRequired)
        #expect(try kind(#"{"error":"access_denied","error_description":"AADB2C90118: forgot password"}"#) == .passwordResetRequired)
        #expect(try kind(#"{"error":"temporarily_unavailable"}"#) == .serverError)
        let error = OAuthErrorResponse.authError(
            json: try .parse(#"{"error":"invalid_grant","error_codes":[700082],"claims":"{}","correlation_id":"c"}"#),
            httpStatus: 400, retryAfter: 3)
        #expect(error.errorCodes == [700082])
        #expect(error.claims == "{}")
        #expect(error.retryAfter == 3)
    }
}
