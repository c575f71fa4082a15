import AuthSeams
import AuthTestSupport
import Testing

@testable import AuthCore

@Suite struct AuthorityTests {
    @Test(arguments: [
        ("https://login.microsoftonline.com/common", Authority.Kind.aad, "common", nil as String?, "https://login.microsoftonline.com/common"),
        (
            "https://login.microsoftonline.com/contoso.onmicrosoft.com/", .aad, "contoso.onmicrosoft.com", nil,
            "https://login.microsoftonline.com/contoso.onmicrosoft.com"
        ),
        (
            "https://contoso.b2clogin.com/tfp/contoso.onmicrosoft.com/B2C_1_SignUpSignIn", .b2c, "contoso.onmicrosoft.com", "b2c_1_signupsignin",
            "https://contoso.b2clogin.com/tfp/contoso.onmicrosoft.com/B2C_1_SignUpSignIn"
        ),
        (
            "https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_edit", .b2c, "contoso.onmicrosoft.com", "b2c_1_edit",
            "https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_edit"
        ),
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

    @Test func honoursADeclaredKindForCustomDomains() throws {
        let b2c = try Authority("https://login.contoso.com/contoso.onmicrosoft.com/B2C_1_susi", declared: .b2c)
        #expect(b2c.kind == .b2c)
        #expect(b2c.policy == "b2c_1_susi")
        let ciam = try Authority("https://login.contoso.com/aaaa-bbbb", declared: .ciam)
        #expect(ciam.kind == .ciam)
        #expect(ciam.tenant == "aaaa-bbbb")
        #expect(throws: AuthError.self) { try Authority("https://login.contoso.com/onlytenant", declared: .b2c) }
        #expect(throws: AuthError.self) { try Authority("https://login.contoso.com/", declared: .ciam) }
    }

    @Test func refusesInsecureAndPathlessAuthorities() {
        #expect(throws: AuthError.self) { try Authority("http://login.microsoftonline.com/common") }
        #expect(throws: AuthError.self) { try Authority("https://login.microsoftonline.com") }
        #expect(throws: AuthError.self) { try Authority("login.microsoftonline.com/common") }
    }

    @Test func refusesATenantThatIsNotOneAndDotSegments() throws {
        for text in [
            "https://login.microsoftonline.com/..", "https://login.microsoftonline.com/.", "https://login.microsoftonline.com/%2e%2e",
            "https://login.microsoftonline.com/a_b", "https://x.b2clogin.com/tfp/../b2c_1_x", "https://x.b2clogin.com/../b2c_1_x",
            "https://login.contoso.com/..", "https://x.ciamlogin.com/..",
        ] {
            let error = #expect(throws: AuthError.self, "\(text)") { try Authority(text) }
            #expect(error?.message.contains("is not a tenant") == true || error?.message.contains("segment") == true, "\(text)")
        }
        #expect(throws: AuthError.self) { try Authority("https://idp.example/realms/../admin", declared: .oidc) }
        #expect(throws: AuthError.self) { try Authority("https://idp.example/realms/%2E", declared: .oidc) }
        #expect(try Authority("https://idp.example/realms/my_realm", declared: .oidc).kind == .oidc, "an issuer's path is its own")
        #expect(try Authority("https://login.microsoftonline.com/contoso.onmicrosoft.com").tenant == "contoso.onmicrosoft.com")
    }

    @Test func decidesTrustByKindAndList() throws {
        let trust = AuthorityTrust(knownAuthorities: ["contoso.b2clogin.com", "https://127.0.0.1:9443"])
        #expect(try trust.decide(try Authority("https://login.microsoftonline.com/common")) == .discover(validates: false))
        #expect(try trust.decide(try Authority("https://evil.example.com/common")) == .discover(validates: true))
        #expect(try trust.decide(try Authority("https://contoso.b2clogin.com/tfp/t/B2C_1_x")) == .trusted)
        #expect(try trust.decide(try Authority("https://127.0.0.1:9443/common")) == .trusted)
        #expect(try trust.decide(try Authority("https://contoso.ciamlogin.com/")) == .trusted)
        #expect(throws: AuthError.self) { try trust.decide(try Authority("https://other.b2clogin.com/tfp/t/B2C_1_x")) }
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

    @Test func decodesBothAlphabetsPaddedOrNot() {
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("+/8=") == [0xFB, 0xFF])
        #expect(Base64URL.decode("YQ") == [0x61])
        #expect(Base64URL.decode("YQ==") == [0x61])
        #expect(Base64URL.decode("YWJj") == Array("abc".utf8))
        #expect(Base64URL.decode("") == [])
        #expect(Base64URL.decode("YWJjZ") == nil)  // one character past a group: no encoding makes it
        #expect(Base64URL.decode("YW Jj") == nil)
        #expect(Base64URL.decode("YWJ\u{e9}") == nil)
    }

    @Test func readsIDTokenClaimsAndClientInfo() throws {
        let token = try IDToken(raw: Tokens.jwt(#"{"oid":"o","tid":"t","emails":["b2c@x.com"],"nonce":"n"}"#))
        #expect(token.objectId == "o")
        #expect(token.username == "b2c@x.com")
        #expect(token.nonce == "n")
        #expect(throws: AuthError.self) { try IDToken(raw: "not-a-jwt") }
        #expect(try ClientInfo(raw: Tokens.clientInfo).homeAccountId == "oid-1.tid-1")
    }

    @Test func readsAnIDTokensPartsAndItsClaimsAlone() throws {
        let header = Base64URL.encode(Array(#"{"alg":"RS256","kid":"k"}"#.utf8))
        let payload = Base64URL.encode(Array(#"{"oid":"o","tid":"t"}"#.utf8))
        let signature = Base64URL.encode([1, 2, 3, 250])
        let raw = header + "." + payload + "." + signature
        let token = try IDToken(raw: raw)
        #expect(token.header["kid"]?.stringValue == "k")
        #expect(token.signingInput == header + "." + payload)
        #expect(token.signature == [1, 2, 3, 250])
        #expect(try IDToken.claims(of: raw).object == token.claims)
        #expect(token.tenantId == "t")
        let unsigned = try IDToken(raw: header + "." + payload)
        #expect(unsigned.signature.isEmpty)
        #expect(unsigned.claims == token.claims)
        for malformed in ["", "no-dots", "a.b.c.d", "..", ".\(payload).x.", "\(header).!!!.x", "\(header)..x"] {
            #expect(throws: AuthError.self) { try IDToken(raw: malformed) }
            #expect(throws: AuthError.self) { try IDToken.claims(of: malformed) }
        }
    }

    @Test func grantsTheClientIdScopeTheServiceDoesNotEcho() {
        #expect(Scopes.granted(["openid"], requested: ["App-Id"], clientId: "app-id") == ["openid", "App-Id"])
        #expect(Scopes.declined(requested: ["App-Id"], granted: Scopes.granted(["openid"], requested: ["App-Id"], clientId: "app-id")).isEmpty)
        #expect(Scopes.granted(nil, requested: ["User.Read"], clientId: "app-id") == ["User.Read"])
        #expect(Scopes.granted(["openid"], requested: ["Mail.Read"], clientId: "app-id") == ["openid"])
        let devops = "499b84ac-1321-427f-aa17-267ca6975798/.default"
        #expect(
            Scopes.granted(["499b84ac-1321-427f-aa17-267ca6975798/user_impersonation", "openid"], requested: [devops, "openid"], clientId: "app-id")
                == ["499b84ac-1321-427f-aa17-267ca6975798/user_impersonation", "openid", devops])
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
        #expect(try kind(#"{"error":"invalid_grant","error_codes":[50129]}"#) == .workplaceJoinRequired)
        #expect(try kind(#"{"error":"invalid_scope"}"#) == .invalidConfiguration)
        let error = OAuthErrorResponse.authError(
            json: try .parse(#"{"error":"invalid_grant","error_codes":[700082],"claims":"{}","correlation_id":"c"}"#),
            httpStatus: 400, retryAfter: 3)
        #expect(error.errorCodes == [700082])
        #expect(error.claims == "{}")
        #expect(error.retryAfter == 3)
    }
}

@Suite struct AuthorityResolverTests {
    private static func discovery(_ body: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, body: Array(body.utf8))
    }

    @Test func registersTheAliasesInstanceDiscoveryReturns() async throws {
        let http = FakeHTTPTransport { request in
            if request.url.contains("/discovery/instance") {
                return Self.discovery(#"{"metadata":[{"aliases":["login.microsoftonline.com","login.windows.net","login.sovereign.example"]}]}"#)
            }
            return Tokens.discovery
        }
        let resolver = AuthorityResolver(transport: http, trust: AuthorityTrust(knownAuthorities: []))
        let resolved = try await resolver.resolve(try Authority("https://login.microsoftonline.com/common"))
        #expect(resolved.environments == ["login.microsoftonline.com", "login.windows.net", "login.sovereign.example"])
        #expect(resolver.aliases(of: "login.sovereign.example").contains("login.microsoftonline.com"))
        #expect(http.requests(to: "openid-configuration").count == 1)
        _ = try await resolver.resolve(try Authority("https://login.microsoftonline.com/common"))
        #expect(http.requests.filter { $0.url.contains("/discovery/instance") }.count == 1)
    }

    @Test func refusesAnInstanceDiscoveryDoesNotKnow() async throws {
        let http = FakeHTTPTransport { request in
            request.url.contains("/discovery/instance")
                ? Self.discovery(#"{"error":"invalid_instance","error_description":"AADSTS50049"}"#, status: 400) : Tokens.discovery
        }
        let resolver = AuthorityResolver(transport: http, trust: AuthorityTrust(knownAuthorities: []))
        do {
            _ = try await resolver.resolve(try Authority("https://login.evil.example/common"))
            Issue.record("an unknown host was trusted")
        } catch let error as AuthError {
            #expect(error.kind == .authorityNotTrusted)
        }
        #expect(http.requests.first?.url.hasPrefix("https://login.microsoftonline.com/common/discovery/instance?") == true)
    }

    @Test func skipsDiscoveryForListedHostsAndWhenTurnedOff() async throws {
        let http = FakeHTTPTransport { _ in Tokens.discovery }
        _ = try await AuthorityResolver(transport: http, trust: AuthorityTrust(knownAuthorities: ["login.contoso.example"]))
            .resolve(try Authority("https://login.contoso.example/common"))
        _ = try await AuthorityResolver(transport: http, trust: AuthorityTrust(knownAuthorities: [], instanceDiscovery: false))
            .resolve(try Authority("https://login.other.example/common"))
        #expect(!http.requests.contains { $0.url.contains("/discovery/instance") })
    }

    @Test func discoversAGenericOIDCProviderAtTheIssuer() async throws {
        let http = FakeHTTPTransport { _ in
            HTTPResponse(
                status: 200,
                body: Array(
                    #"{"authorization_endpoint":"https://id.example.com/auth","token_endpoint":"https://id.example.com/token","issuer":"https://id.example.com/realms/main"}"#
                        .utf8))
        }
        let authority = try Authority("https://id.example.com/realms/main/", declared: .oidc)
        #expect(authority.url == "https://id.example.com/realms/main")
        let resolved = try await AuthorityResolver(transport: http, trust: AuthorityTrust(knownAuthorities: [])).resolve(authority)
        #expect(http.requests.first?.url == "https://id.example.com/realms/main/.well-known/openid-configuration")
        #expect(resolved.metadata.deviceCodeEndpoint == nil)
    }
}
