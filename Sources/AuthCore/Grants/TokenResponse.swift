import JSON

/// A successful answer of the token endpoint, validated before anything reaches the cache.
///
/// The rules (a response that breaks one is ``AuthError/Kind/malformedResponse`` and nothing
/// is cached):
/// - `access_token`: required, a non-empty string of at most ``maxTokenBytes``; `refresh_token`
///   and `id_token`, when present, likewise (an empty `refresh_token` counts as absent).
/// - `token_type`, `scope`, `client_info`, `foci`: strings when present; `scope` at most
///   ``maxTokenBytes``. `token_type` absent means `Bearer`; any spelling of `bearer` is
///   normalised to `Bearer` (as MSAL caches it); any other type (`pop`, `mac`...) is refused:
///   a request asks for a bearer token, and a token of another type used as one would fail at
///   the resource or, worse, be accepted without its proof. An `ssh-cert` request
///   (``SSHKeyBinding``) takes `ssh-cert` and nothing else, and its token must read as an
///   OpenSSH RSA user certificate (``OpenSSHCertificate``).
/// - `expires_in`: seconds as a number or a numeric string (both occur). Absent: 3600 (the
///   spec lets the server omit it; MSAL assumes an hour too). Not a number, or negative: refused.
///   More than ``maxLifetime``: clamped to it.
/// - `ext_expires_in`, `refresh_in`: optional hints, ignored when not a number or negative,
///   clamped to ``maxLifetime``; a `refresh_in` beyond `expires_in` is ignored.
public struct TokenResponse: Sendable {
    public var accessToken: String
    public var tokenType: String
    public var expiresIn: Int64
    public var extExpiresIn: Int64?
    public var refreshIn: Int64?
    public var scope: [String]?
    public var refreshToken: String?
    public var idToken: String?
    public var clientInfo: String?
    public var familyId: String?

    /// The largest token (access, refresh or ID) accepted, in bytes of UTF-8: 64 KiB.
    public static let maxTokenBytes = 64 * 1024
    /// The longest lifetime believed, in seconds: one year (longer ones are clamped).
    public static let maxLifetime: Int64 = 365 * 24 * 3600
    /// The lifetime assumed when the response gives none, in seconds.
    public static let defaultLifetime: Int64 = 3600

    /// Parses and validates the body (see the type's rules).
    /// `binding`: the key of a bound request (its type expected; an `ssh-cert` certifying that key).
    public init(json: JSONValue, binding: TokenBinding? = nil) throws(AuthError) {
        let expected = binding?.tokenType ?? "Bearer"
        guard let accessToken = try Self.token(json, "access_token") else {
            throw .malformed("no access_token in the token response")
        }
        self.accessToken = accessToken
        tokenType = Self.normalized(tokenType: try Self.string(json, "token_type"))
        guard TokenBinding.matches(binding, tokenType: tokenType) else {
            throw .malformed("the token response's token_type is \"\(tokenType.prefix(32))\", not \(expected)")
        }
        if let sshKey = binding?.sshKey {
            guard let certificate = OpenSSHCertificate(base64: accessToken) else {
                throw .malformed("the ssh-cert token is not an OpenSSH RSA user certificate")
            }
            guard certificate.publicKey == sshKey.publicKey else { throw .malformed("the SSH certificate is for another key") }
        }
        expiresIn = try Self.lifetime(json["expires_in"])
        extExpiresIn = Self.hint(json["ext_expires_in"])
        refreshIn = Self.hint(json["refresh_in"]).flatMap { $0 <= expiresIn ? $0 : nil }
        let scopes = try Self.string(json, "scope")
        guard (scopes?.utf8.count ?? 0) <= Self.maxTokenBytes else {
            throw .malformed("the token response's scope is longer than \(Self.maxTokenBytes) bytes")
        }
        scope = scopes.map { $0.split(separator: " ").map(String.init) }
        refreshToken = try Self.token(json, "refresh_token")
        idToken = try Self.token(json, "id_token")
        clientInfo = try Self.string(json, "client_info")
        familyId = try Self.string(json, "foci")
    }

    /// A token type as results and the cache carry it: absent or any spelling of `bearer` is
    /// `Bearer` (as MSAL writes it); other types are kept as sent.
    public static func normalized(tokenType: String?) -> String {
        guard let tokenType, tokenType.lowercased() != "bearer" else { return "Bearer" }
        return tokenType
    }

    /// Whether `tokenType` (absent meaning `Bearer`) is a bearer token, in any spelling.
    public static func isBearer(_ tokenType: String?) -> Bool {
        normalized(tokenType: tokenType) == "Bearer"
    }

    /// Seconds given as a number or a numeric string (both occur in the wild).
    static func seconds(_ value: JSONValue?) -> Int64? {
        switch value {
        case .int(let i)?: i
        case .double(let d)?: d.isFinite ? Int64(min(max(d.rounded(), -9e18), 9e18)) : nil
        case .string(let s)?: Int64(s)
        default: nil
        }
    }

    /// `expires_in`: absent is the default, a number is clamped, anything else is refused.
    private static func lifetime(_ value: JSONValue?) throws(AuthError) -> Int64 {
        guard let value, value != .null else { return defaultLifetime }
        guard let seconds = seconds(value), seconds >= 0 else {
            throw .malformed("the token response's expires_in is not a number of seconds")
        }
        return min(seconds, maxLifetime)
    }

    /// An optional lifetime hint: ignored unless a non-negative number; clamped.
    private static func hint(_ value: JSONValue?) -> Int64? {
        seconds(value).flatMap { $0 >= 0 ? min($0, maxLifetime) : nil }
    }

    /// The member `name` if present: it must be a string.
    private static func string(_ json: JSONValue, _ name: String) throws(AuthError) -> String? {
        guard let value = json[name], value != .null else { return nil }
        guard let text = value.stringValue else { throw .malformed("the token response's \(name) is not a string") }
        return text
    }

    /// A token member if present and not empty: a string of at most ``maxTokenBytes``.
    private static func token(_ json: JSONValue, _ name: String) throws(AuthError) -> String? {
        guard let text = try string(json, name), !text.isEmpty else { return nil }
        guard text.utf8.count <= maxTokenBytes else {
            throw .malformed("the token response's \(name) is \(text.utf8.count) bytes, more than the \(maxTokenBytes) accepted")
        }
        return text
    }
}
