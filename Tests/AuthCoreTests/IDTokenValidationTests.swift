import AuthSeams
import AuthTestSupport
import Crypto
import CryptoExtras
import JSON
import Logging
import Synchronization
import Testing
import TokenCache

@testable import AuthCore

/// ID tokens are checked before anything is cached: issuer, audience, lifetime, nonce, and a
/// generic OpenID provider's signature against its published keys (ES256 and RS256).
@Suite struct IDTokenValidationTests {
    static let now: Int64 = 1_700_000_000
    static let issuer = "https://idp.example/realms/a"
    let ecKey = P256.Signing.PrivateKey()

    // MARK: - Building tokens

    static func claims(_ overrides: [String: JSONValue] = [:], dropping: Set<String> = []) -> JSONObject {
        var claims: JSONObject = [
            "iss": .string(issuer), "aud": "client", "sub": "sub-1", "exp": .int(now + 3600),
            "nbf": .int(now - 10), "iat": .int(now - 10), "preferred_username": "alice@idp.example",
        ]
        for (name, value) in overrides { claims[name] = value }
        for name in dropping { claims[name] = nil }
        return claims
    }

    static func encoded(_ object: JSONObject) -> String {
        Base64URL.encode(JSONValue.object(object).serialized())
    }

    static func unsigned(_ claims: JSONObject) -> String {
        Tokens.jwt(String(decoding: JSONValue.object(claims).serialized(), as: UTF8.self))
    }

    func es256(_ claims: JSONObject, kid: String = "ec-1") throws -> String {
        let input = Self.encoded(["alg": "ES256", "kid": .string(kid), "typ": "JWT"]) + "." + Self.encoded(claims)
        let signature = try ecKey.signature(for: Array(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    var jwks: JSONValue {
        let raw = Array(ecKey.publicKey.rawRepresentation)
        return [
            "keys": [
                [
                    "kty": "EC", "crv": "P-256", "kid": "ec-1", "use": "sig", "alg": "ES256",
                    "x": .string(Base64URL.encode(raw.prefix(32))), "y": .string(Base64URL.encode(raw.suffix(32))),
                ]
            ]
        ]
    }

    static let metadata: JSONValue = [
        "issuer": .string(issuer), "authorization_endpoint": .string(issuer + "/authorize"),
        "token_endpoint": .string(issuer + "/token"), "jwks_uri": .string(issuer + "/jwks"),
    ]

    /// The keys endpoint, counted.
    func keysEndpoint() -> FakeHTTPTransport {
        let body = jwks.serialized()
        return FakeHTTPTransport { request in
            request.url.hasSuffix("/jwks") ? HTTPResponse(status: 200, body: body) : HTTPResponse(status: 404, body: [])
        }
    }

    func validator(
        _ authority: String, kind: Authority.Kind? = nil, metadata: JSONValue = Self.metadata,
        nonce: String? = nil, transport: FakeHTTPTransport,
        clock: ManualClock = ManualClock(Self.now)
    ) throws -> IDTokenValidator {
        let authority = try Authority(authority, declared: kind)
        return IDTokenValidator(
            clientId: "client", authority: authority, metadata: try OpenIDMetadata(json: metadata, kind: authority.kind),
            environments: EnvironmentAliases.of(authority.host), now: Self.now, nonce: nonce,
            signingKeys: SigningKeyCache(transport: transport, persisted: PersistedDiscovery(cache: nil, clock: clock)))
    }

    func refusal(_ token: String, _ validator: IDTokenValidator) async -> String? {
        do {
            try await validator.validate(try IDToken(raw: token))
            return nil
        } catch let error as AuthError {
            #expect(error.kind == .malformedResponse)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    // MARK: - Claims

    @Test func acceptsAMicrosoftTokenFromTheTemplateIssuerOrAnAlias() async throws {
        let aad: JSONValue = [
            "issuer": "https://login.microsoftonline.com/{tenantid}/v2.0",
            "authorization_endpoint": "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
            "token_endpoint": "https://login.microsoftonline.com/common/oauth2/v2.0/token",
        ]
        let check = try validator("https://login.microsoftonline.com/common", metadata: aad, transport: keysEndpoint())
        for iss in ["https://login.microsoftonline.com/tid-1/v2.0", "https://login.windows.net/tid-1/v2.0/"] {
            let token = Self.unsigned(Self.claims(["iss": .string(iss), "tid": "tid-1"]))
            #expect(await refusal(token, check) == nil, "\(iss)")
        }
        for iss in ["https://login.microsoftonline.com/other-tenant/v2.0", "https://evil.example/tid-1/v2.0"] {
            let token = Self.unsigned(Self.claims(["iss": .string(iss), "tid": "tid-1"]))
            #expect(await refusal(token, check)?.contains("issuer") == true, "\(iss)")
        }
    }

    @Test(
        arguments: [
            (["aud": "another-client"], [], "audience"),
            (["aud": ["x", "y"]], [], "audience"),
            (["exp": .int(now - 301)], [], "expired"),
            ([:], ["exp"], "expiry"),
            (["nbf": .int(now + 301)], [], "not valid before"),
            (["iss": "https://idp.example/realms/b"], [], "issuer"),
            ([:], ["iss"], "issuer"),
            (["nonce": "other"], [], "nonce"),
        ] as [([String: JSONValue], [String], String)])
    func refusesABadClaim(overrides: [String: JSONValue], dropping: [String], reason: String) async throws {
        let check = try validator(Self.issuer, kind: .oidc, nonce: "n-1", transport: keysEndpoint())
        let claims = Self.claims(overrides.merging(["nonce": "n-1"]) { mine, _ in mine }, dropping: Set(dropping))
        let message = await refusal(try es256(claims), check)
        #expect(message?.contains(reason) == true, "\(message ?? "accepted")")
        #expect(message?.contains("nothing was cached") == true)
    }

    @Test func allowsFiveMinutesOfClockSkew() async throws {
        let check = try validator(Self.issuer, kind: .oidc, transport: keysEndpoint())
        let claims = Self.claims(["exp": .int(Self.now - 299), "nbf": .int(Self.now + 299), "aud": ["x", "client"]])
        #expect(await refusal(try es256(claims), check) == nil)
    }

    // MARK: - Signatures

    @Test func verifiesAGenericProvidersES256SignatureWithKeysFetchedOnce() async throws {
        let keys = keysEndpoint()
        let check = try validator(Self.issuer, kind: .oidc, transport: keys)
        #expect(await refusal(try es256(Self.claims()), check) == nil)
        #expect(await refusal(try es256(Self.claims(["name": "again"])), check) == nil)
        #expect(keys.requests.count == 1, "the keys are fetched once: \(keys.requests.map(\.url))")
    }

    @Test func refusesATamperedUnsignedOrForeignSignedToken() async throws {
        let keys = keysEndpoint()
        let clock = ManualClock(Self.now)
        let check = try validator(Self.issuer, kind: .oidc, transport: keys, clock: clock)
        let good = try es256(Self.claims())
        let parts = good.split(separator: ".").map(String.init)
        let tampered = parts[0] + "." + Self.encoded(Self.claims(["sub": "someone-else"])) + "." + parts[2]
        #expect(await refusal(tampered, check)?.contains("signature") == true)
        #expect(await refusal(Self.unsigned(Self.claims()), check)?.contains("RS256 or ES256") == true)
        let stranger = try IDTokenValidationTests().es256(Self.claims())  // another key, same kid
        #expect(await refusal(stranger, check)?.contains("signature") == true)
        // An unknown kid fetches the keys again (rotation), at most once a minute.
        #expect(await refusal(try es256(Self.claims(), kid: "rotated"), check)?.contains("signature") == true)
        #expect(keys.requests.count == 1, "fetched a moment ago: \(keys.requests.map(\.url))")
        clock.advance(61)
        #expect(await refusal(try es256(Self.claims(), kid: "rotated"), check)?.contains("signature") == true)
        #expect(await refusal(try es256(Self.claims(), kid: "rotated"), check)?.contains("signature") == true)
        #expect(keys.requests.count == 2, "\(keys.requests.map(\.url))")
    }

    @Test func verifiesRS256() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let input = Self.encoded(["alg": "RS256", "kid": "rsa-1"]) + "." + Self.encoded(Self.claims())
        let signature = try key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        let der = key.publicKey.pkcs1DERRepresentation
        // n and e from the PKCS#1 DER: SEQUENCE { INTEGER n, INTEGER e } (2048-bit: fixed layout).
        let bytes = Array(der)
        let n = Array(bytes[9..<(9 + 256)])
        let e = Array(bytes.suffix(3))
        let set = try #require(
            SigningKeys([
                "keys": [
                    [
                        "kty": "RSA", "kid": "rsa-1", "n": .string(Base64URL.encode(n)),
                        "e": .string(Base64URL.encode(e)),
                    ]
                ]
            ]))
        #expect(set.verify(signature.rawRepresentation.map { $0 }, of: input, algorithm: "RS256", kid: "rsa-1"))
        #expect(!set.verify(signature.rawRepresentation.map { $0 }, of: input + "x", algorithm: "RS256", kid: "rsa-1"))
        #expect(!set.verify(signature.rawRepresentation.map { $0 }, of: input, algorithm: "ES256", kid: "rsa-1"))
    }

    // MARK: - Through a flow

    @Test func aRefreshWhoseIDTokenFailsCachesNothing() async throws {
        let clock = ManualClock()
        let cache = TokenCache(store: MemoryTokenCacheStore())
        try cache.save(
            TokenResponseRecord(
                clientId: "client", environment: "login.microsoftonline.com", realm: "common", homeAccountId: "oid-1.tid-1",
                localAccountId: "oid-1", username: "alice@contoso.com", scopes: ["User.Read"], accessToken: "at-old",
                cachedAt: clock.now(), expiresOn: clock.now() + 3600, refreshToken: "rt-old"))
        let before = try cache.read {
            $0.refreshTokensToTry(homeAccountId: "oid-1.tid-1", environments: ["login.microsoftonline.com"], clientId: "client")
        }
        let foreign = Tokens.jwt(Tokens.idTokenClaims.replacing(#""aud":"client""#, with: #""aud":"someone-else""#))
        let http = FakeHTTPTransport { request in
            if let answer = Tokens.discoveryAnswer(for: request) { return answer }
            let body =
                #"{"token_type":"Bearer","access_token":"at-new","expires_in":3600,"refresh_token":"rt-new","id_token":"\#(foreign)","client_info":"\#(Tokens.clientInfo)"}"#
            return HTTPResponse(status: 200, body: Array(body.utf8))
        }
        let app = PublicClientApplication(
            configuration: ClientConfiguration(clientId: "client", authority: try Authority("https://login.microsoftonline.com/common")),
            dependencies: AuthDependencies(
                transport: http, cache: cache, clock: clock, browser: UnusedBrowser(),
                listener: UnusedListener(), logger: Logger(label: "test")))
        var request = SilentRequest()
        request.forceRefresh = true
        let error = await #expect(throws: AuthError.self) { _ = try await app.acquireTokenSilently(request, correlationId: "c") }
        #expect(error?.kind == .malformedResponse)
        #expect(
            try cache.read { $0.refreshTokensToTry(homeAccountId: "oid-1.tid-1", environments: ["login.microsoftonline.com"], clientId: "client") }
                == before)
        #expect(try await app.acquireTokenSilently(SilentRequest(), correlationId: "c").accessToken == "at-old")
    }
}
