import AuthSeams
import JSON

/// The App Service managed-identity protocols the Azure SDKs' `ManagedIdentityCredential`
/// speaks: api-version 2019-08-01 when `IDENTITY_ENDPOINT` and `IDENTITY_HEADER` are set
/// (`GET {endpoint}?api-version=2019-08-01&resource=R`, header `X-IDENTITY-HEADER`), and the
/// older SDKs' 2017-09-01 when `MSI_ENDPOINT` and `MSI_SECRET` are (`GET
/// {endpoint}?api-version=2017-09-01&resource=R`, header `secret`; `expires_on` a date). One
/// endpoint and one secret serve both, as on App Service; the api-version picks the protocol,
/// and each protocol's own header is the only one taken.
public enum ManagedIdentityProtocol {
    public static let path = "/msi/token"
    public static let secretHeader = "x-identity-header"
    public static let apiVersion = "2019-08-01"
    /// The 2017 protocol's header and version.
    public static let legacySecretHeader = "secret"
    public static let legacyApiVersion = "2017-09-01"
    /// The parameters that name a user-assigned identity, which this endpoint cannot be: it
    /// answers 400 rather than hand out the user's token as if it were that identity's
    /// (`clientid` is the 2017 protocol's spelling).
    static let userAssignedIdentityParameters = ["client_id", "clientid", "mi_res_id", "msi_res_id", "object_id", "principal_id"]

    /// Which protocol a request speaks: its api-version.
    public enum Version: Sendable, Equatable {
        /// 2019-08-01: `X-IDENTITY-HEADER`, `expires_on` in Unix seconds.
        case current
        /// 2017-09-01: `secret`, `expires_on` as "MM/dd/yyyy HH:mm:ss +00:00" (UTC).
        case legacy
    }

    /// A request the endpoint will answer with a token: the scope to ask for; MSAL's
    /// revocation parameters (docs/msiv1_token_revocation.md): `token_sha256_to_refresh`, the
    /// hex SHA-256 of a token the resource refused (a token it matches is renewed, not served
    /// again), and `xms_cc`, the client's capabilities (`cp1`), asked for on that renewal.
    public struct TokenRequest: Sendable, Equatable {
        public let resource: String
        public var version: Version = .current
        public var revokedTokenSHA256: String? = nil
        public var capabilities: [String] = []
        public var scope: String { AzAccessToken.scope(forResource: resource) }
    }

    /// An HTTP answer: status and JSON body.
    public struct Reply: Sendable, Equatable {
        public let status: Int
        public let body: JSONValue

        /// The error shape the SDKs read (`statusCode`, `message`).
        public static func error(_ status: Int, _ message: String) -> Reply {
            Reply(status: status, body: ["statusCode": .int(Int64(status)), "message": .string(message)])
        }
    }

    /// Checks a request: method, path, the secret in its protocol's header (compared in constant
    /// time), api-version (required: 2019-08-01 or 2017-09-01), no user-assigned identity, and
    /// resource. Either the token to fetch or the reply to send at once.
    public static func evaluate(
        method: String, target: String, headers: [String: String],
        secret: String
    ) -> Result<TokenRequest, ReplyError> {
        let pathEnd = target.firstIndex(of: "?") ?? target.endIndex
        guard target[..<pathEnd] == path else { return .failure(ReplyError(.error(404, "not found: use \(path)"))) }
        guard method == "GET" else { return .failure(ReplyError(.error(405, "only GET is served"))) }
        let query = pathEnd < target.endIndex ? target[target.index(after: pathEnd)...] : ""
        let decoded = try? FormURLEncoding.decode(query)
        let version: Version = decoded?["api-version"] == legacyApiVersion ? .legacy : .current
        let header = version == .legacy ? legacySecretHeader : secretHeader
        guard let presented = headers[header], constantTimeEqual(presented, secret) else {
            return .failure(ReplyError(.error(401, version == .legacy ? "missing or wrong secret header" : "missing or wrong X-IDENTITY-HEADER")))
        }
        guard let parameters = decoded else {
            return .failure(ReplyError(.error(400, "the query string is malformed")))
        }
        guard let requested = parameters["api-version"] else {
            return .failure(ReplyError(.error(400, "the query names no api-version (\(apiVersion) or \(legacyApiVersion))")))
        }
        guard version == .legacy || requested == apiVersion else {
            return .failure(ReplyError(.error(400, "api-version \(requested) is not supported (\(apiVersion) or \(legacyApiVersion))")))
        }
        if let named = userAssignedIdentityParameters.first(where: { parameters[$0] != nil }) {
            return .failure(
                ReplyError(
                    .error(
                        400,
                        "\(named): this endpoint serves the signed-in user's tokens, not a user-assigned identity; "
                            + "leave the identity unset (system-assigned)")))
        }
        guard let resource = parameters["resource"], !resource.isEmpty, resource.count <= 2048 else {
            return .failure(ReplyError(.error(400, "the query names no resource")))
        }
        var request = TokenRequest(resource: resource, version: version)
        if let hash = parameters["token_sha256_to_refresh"] {
            guard hash.utf8.count == 64, hash.utf8.allSatisfy({ isHex($0) }) else {
                return .failure(ReplyError(.error(400, "token_sha256_to_refresh is not a hex SHA-256 (64 digits)")))
            }
            request.revokedTokenSHA256 = hash.lowercased()
        }
        if let listed = parameters["xms_cc"] {
            let capabilities = listed.split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty }
            guard capabilities.count <= 8, capabilities.allSatisfy({ $0.utf8.count <= 32 && $0.utf8.allSatisfy(isWordByte) }) else {
                return .failure(ReplyError(.error(400, "xms_cc is not a list of client capabilities (e.g. cp1)")))
            }
            request.capabilities = capabilities
        }
        return .success(request)
    }

    /// The `claims` that ask the service for tokens fit for `capabilities` (MSAL's shape).
    public static func capabilityClaims(_ capabilities: [String]) -> JSONValue? {
        guard !capabilities.isEmpty else { return nil }
        return ["access_token": ["xms_cc": ["values": JSONValue(capabilities)]]]
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46)
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isHex(byte) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F || byte == 0x2D
    }

    /// The token reply: `access_token`, `expires_on`, `resource`, `token_type`, and for 2019-08-01
    /// `client_id`. `expires_on` is Unix seconds as a string (2019-08-01), or for 2017-09-01 the
    /// date App Service answered on Linux, "MM/dd/yyyy HH:mm:ss +00:00" in UTC: the older SDKs
    /// that speak it parse that date (azure-identity for JavaScript only that; for Python both).
    public static func tokenReply(
        token: String, expiresOn: Int64, tokenType: String, resource: String,
        clientId: String, version: Version = .current
    ) -> Reply {
        let body: JSONValue
        switch version {
        case .current:
            body = [
                "access_token": .string(token), "expires_on": .string(String(expiresOn)), "resource": .string(resource),
                "token_type": .string(tokenType), "client_id": .string(clientId),
            ]
        case .legacy:
            body = [
                "access_token": .string(token), "expires_on": .string(legacyDate(expiresOn)), "resource": .string(resource),
                "token_type": .string(tokenType),
            ]
        }
        return Reply(status: 200, body: body)
    }

    /// Unix seconds as the 2017 protocol's date, "MM/dd/yyyy HH:mm:ss +00:00" (UTC; proleptic
    /// Gregorian, H. Hinnant's civil-from-days), held within years 1 to 9999 (no overflow).
    static func legacyDate(_ unclamped: Int64) -> String {
        let seconds = min(max(unclamped, -62_135_596_800), 253_402_300_799)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(month))/\(two(day))/\(year) \(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) +00:00"
    }

    /// A new `IDENTITY_HEADER` secret: 32 random bytes from the system's generator, as hex.
    public static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<min(x.count, y.count) { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

/// A reply decided before any token is fetched.
public struct ReplyError: Error, Sendable, Equatable {
    public let reply: ManagedIdentityProtocol.Reply
    public init(_ reply: ManagedIdentityProtocol.Reply) { self.reply = reply }
}
