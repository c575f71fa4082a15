import AuthSeams
import JSON

/// A client assertion: a short-lived JWT a CI system or platform signed for this workload
/// (GitHub Actions' or Azure Pipelines' OIDC token, a Kubernetes projected service account
/// token), which the token endpoint takes in place of a client secret (workload identity
/// federation).
public struct ClientAssertion: Sendable {
    /// The JWT itself: a credential, never logged nor reported.
    public let jwt: String
    /// Its `exp` (Unix seconds), when its payload says.
    public let expiresOn: Int64?

    public init(jwt: String) {
        self.jwt = jwt
        expiresOn = Self.expiry(of: jwt)
    }

    /// The `exp` claim of a JWT's payload, read without checking anything else.
    static func expiry(of jwt: String) -> Int64? {
        let parts = jwt.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(String(Substring(parts[1]))),
            let claims = try? JSONValue.parse(String(decoding: payload, as: UTF8.self))
        else { return nil }
        return claims["exp"]?.intValue
    }
}

/// Where the client assertion comes from. Read at each exchange, never kept: a CI system's
/// token lives minutes, and a job may outlive several.
public protocol ClientAssertionSource: Sendable {
    /// The source as `status` and errors name it (`file /var/run/secrets/...`, `GitHub Actions`).
    var name: String { get }
    /// A fresh assertion, read now.
    /// - Throws: ``AuthError`` (`invalidConfiguration` when the source is not set up,
    ///   `networkError`/`serverError` when it could not answer) naming the source.
    func assertion(transport: any HTTPTransport) async throws -> ClientAssertion
}

extension ClientAssertionSource {
    /// The error for a source that gave no assertion: its name and why.
    func failure(_ kind: AuthError.Kind, _ reason: String) -> AuthError {
        AuthError(kind, "the client assertion from \(name) could not be read: \(reason)")
    }

    /// A source that is not set up, or gave something that is not an assertion.
    func failure(_ reason: String) -> AuthError { failure(.invalidConfiguration, reason) }

    /// An assertion from text the source gave (surrounding white space dropped), or why not.
    func assertion(fromText text: String) throws -> ClientAssertion {
        let jwt = text.trimmingWhitespace
        guard !jwt.isEmpty, jwt.utf8.filter({ $0 == UInt8(ascii: ".") }).count == 2 else {
            throw failure("it is not a JWT")
        }
        return ClientAssertion(jwt: jwt)
    }
}

extension String {
    /// The text without leading and trailing spaces, tabs and line ends.
    fileprivate var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
