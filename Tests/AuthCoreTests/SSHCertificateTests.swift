import JSON
import Testing
import TokenCache

@testable import AuthCore

/// The OpenSSH formats and the ssh-cert request's rules: the key's JWK and `kid` as `az ssh cert`
/// makes them, the certificate's fields, the renewal margin, and the answers refused.
@Suite struct SSHCertificateTests {
    /// Made with ssh-keygen; `kid` and the certificate (an Ed25519 CA, principals alice@contoso.com
    /// and second, valid 1700000000 to 1700003600) with Python's `cryptography`, as az and the mock do.
    static let key =
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCwVNOH3IBtW21hSLb5PvXOP5exFTKSwHDi3U7vSZ/x7rVytyY589+AEuoZHLev2PZX4tEkXDsVdM0mc1k6MGprTIHc7yWMH68cpCDHVb9aGubMSQXe4n3kZMcAAJ4fNuzuS2TTNaJtXXbwTBweU2Ze0YIF1QOukpBghkeYLK32YLinh0rhvO8SG6mqn1NyXZlXTJULp+MNpYZilDnB1kXGsFKQp6WMvZDDzNyFYkJY46mbAXoaXd3eDDZyTO+blO1TBsX2FEx2JtoCzdw+G5Cl85qd6IV/KzcEazo0YAYrwMC13eRJz2zWC4oRT8bJ0vv11iVVjLbMim+2rLhRm7n/ test"
    static let otherKey =
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCyx0x3ukJ/nKhTw7kd2LJA/uf6QfN5Dm+0H8EADTLBVyUkxT55kDpITCzpRg397crBcTs7mY6XQOOKiFCeOq1rqNXSRDBEWI/7BwteSuyrKCDKFd9yS4RfiGFuAf8TUxePaQ6oXQlWIPj9NtVpdG8tMGF0VACP5CZuC8K4k+k1gfrKP3q+FVE8TJH9KFQXKZjUzUjguqsAVid0lzqmeci/Z7IWG8LVImKjFnos9kodkDzc1SxlY7N21a9wKk0XzHya/lk8/mAUO9x8W0DLVP3Ssrr1/tTg745Rn5O7tU3LdLbiL5QJugrJxGNx8+bVdM2esxWB37t9OmUn6y7JvwTH other"
    static let kid = "c213193514b35db254e05c2886b58d4b43c3aa8d11d14a04f5ca35cc466456fd"
    static let certificate =
        "AAAAHHNzaC1yc2EtY2VydC12MDFAb3BlbnNzaC5jb20AAAAgwV7w7kZXvAscaHjaoq49i6RHbsvII2G8HJ0YIbRng3kAAAADAQABAAABAQCwVNOH3IBtW21hSLb5PvXOP5exFTKSwHDi3U7vSZ/x7rVytyY589+AEuoZHLev2PZX4tEkXDsVdM0mc1k6MGprTIHc7yWMH68cpCDHVb9aGubMSQXe4n3kZMcAAJ4fNuzuS2TTNaJtXXbwTBweU2Ze0YIF1QOukpBghkeYLK32YLinh0rhvO8SG6mqn1NyXZlXTJULp+MNpYZilDnB1kXGsFKQp6WMvZDDzNyFYkJY46mbAXoaXd3eDDZyTO+blO1TBsX2FEx2JtoCzdw+G5Cl85qd6IV/KzcEazo0YAYrwMC13eRJz2zWC4oRT8bJ0vv11iVVjLbMim+2rLhRm7n/AAAAAAAAAAcAAAABAAAAQGMyMTMxOTM1MTRiMzVkYjI1NGUwNWMyODg2YjU4ZDRiNDNjM2FhOGQxMWQxNGEwNGY1Y2EzNWNjNDY2NDU2ZmQAAAAfAAAAEWFsaWNlQGNvbnRvc28uY29tAAAABnNlY29uZAAAAABlU/EAAAAAAGVT/xAAAAAAAAAAEgAAAApwZXJtaXQtcHR5AAAAAAAAAAAAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIHBtbPIh+wQYyz+jsIzRTpWk1YeEw1n9uRN7d8yhoa3JAAAAUwAAAAtzc2gtZWQyNTUxOQAAAEDOIi6HmPEy3LStbxIEQeY+oz9AqdhO3JtEufV1QVyZHvmysoWeVF80hzs0c+UXC2NzTBZA9v6jwIBPBmQ6I10G"

    @Test func theBindingIsAzSSHCertsJWK() throws {
        let binding = try SSHKeyBinding(openSSH: Self.key + "\n")
        #expect(binding.keyId == Self.kid)
        let jwk = try JSONValue.parse(Array(binding.requestConfirmation.utf8))
        #expect(jwk["kty"] == "RSA" && jwk["e"] == "AQAB" && jwk["kid"] == .string(Self.kid))
        #expect(binding.fields.map(\.0) == ["token_type", "req_cnf", "key_id"])
        #expect(binding.fields.first?.1 == "ssh-cert" && binding.fields.last?.1 == Self.kid)
    }

    @Test func aPublicKeyLineRoundTrips() throws {
        let key = try OpenSSHPublicKey(line: Self.key)
        #expect(key.modulus.count == 256 && key.exponent == [1, 0, 1])
        #expect(key.line(comment: "test") == Self.key)
    }

    @Test(arguments: [
        ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICb+iTv5mDUs/Unc7EjJnjJteAvITiWv730MlVYyTFrt ed", "ssh-ed25519, not ssh-rsa"),
        ("ssh-rsa", "not an OpenSSH public key line"),
        ("ssh-rsa !!!!", "not base64"),
        ("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAAgD/", "shorter than 2048 bits"),
        ("ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAICb+iTv5mDUs/Unc7EjJnjJteAvITiWv730MlVYyTFrt", "does not say ssh-rsa"),
    ])
    func refusesWhatIsNotAnRSAKey(_ line: String, _ reason: String) {
        let error = #expect(throws: OpenSSHKeyError.self) { try SSHKeyBinding(openSSH: line) }
        #expect(error?.description.contains(reason) == true, "\(String(describing: error))")
    }

    @Test func readsTheCertificate() throws {
        let certificate = try #require(OpenSSHCertificate(base64: Self.certificate))
        #expect(certificate.principals == ["alice@contoso.com", "second"])
        #expect(certificate.keyId == Self.kid)
        #expect(certificate.validAfter == 1_700_000_000 && certificate.validBefore == 1_700_003_600)
        #expect(certificate.publicKey == (try OpenSSHPublicKey(line: Self.key)))
        #expect(OpenSSHCertificate(base64: String(Self.certificate.dropLast(400))) == nil)
        #expect(OpenSSHCertificate(base64: "AAAAB3NzaC1yc2EAAAADAQAB") == nil)
    }

    @Test func aCertificateIsRenewedWithAThirdOfItsLifeLeftAtMostFiveMinutes() {
        #expect(SSHKeyBinding.renewalMargin(lifetime: 3600) == 300)
        #expect(SSHKeyBinding.renewalMargin(lifetime: 60) == 20)
        #expect(SSHKeyBinding.renewalMargin(lifetime: -5) == 0)
        let token = CachedAccessToken(
            homeAccountId: "h", environment: "e", clientId: "c", realm: "r", target: "s", secret: Self.certificate,
            cachedAt: 1000, expiresOn: 1060, tokenType: "ssh-cert", keyId: Self.kid)
        #expect(!SSHKeyBinding.isDue(token, at: 1039) && SSHKeyBinding.isDue(token, at: 1040))
        var bearer = token
        bearer.tokenType = "Bearer"
        #expect(SSHKeyBinding.isDue(bearer, at: 1000), "a bearer token keeps its 5 minutes")
    }

    @Test func anSSHCertRequestTakesOnlyACertificateForItsKey() throws {
        let binding = try SSHKeyBinding(openSSH: Self.key)
        func parse(_ body: String, _ key: SSHKeyBinding?) throws(AuthError) -> TokenResponse {
            guard let json = try? JSONValue.parse(Array(body.utf8)) else { fatalError("test JSON") }
            return try TokenResponse(json: json, binding: key.map(TokenBinding.sshCertificate))
        }
        let good = #"{"access_token":"\#(Self.certificate)","token_type":"ssh-cert","expires_in":3600}"#
        #expect(try parse(good, binding).tokenType == "ssh-cert")
        let other = try SSHKeyBinding(openSSH: Self.otherKey)
        #expect(throws: AuthError.self) { try parse(good, other) }  // certifies another key
        #expect(throws: AuthError.self) { try parse(good, nil) }  // a bearer request
        #expect(throws: AuthError.self) { try parse(#"{"access_token":"at","token_type":"Bearer"}"#, binding) }
        #expect(throws: AuthError.self) { try parse(#"{"access_token":"notacert","token_type":"ssh-cert"}"#, binding) }
    }
}
