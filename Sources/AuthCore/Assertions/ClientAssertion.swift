import AuthSeams
import JSON

/// A client assertion: a short-lived JWT a CI system or platform signed for this workload
/// (GitHub Actions' or Azure Pipelines' OIDC token, a Kubernetes projected service account
/// token), which the token endpoint takes in place of a client secret (workload identity
/// federation).
public struct ClientAssertion: Sendable {
    /// The JWT itself: a credential, never logged nor reported.
    public let jwt: String
    /// Its `exp` (Unix seconds), when its payload says, within ``plausibleTimes``.
    public let expiresOn: Int64?
    /// Its header and payload are JSON objects (a torn read's prefix is most often not).
    public let isWellFormed: Bool

    public init(jwt: String) {
        self.jwt = jwt
        let (header, claims) = Self.decoded(jwt)
        isWellFormed = header?.objectValue != nil && claims?.objectValue != nil
        expiresOn = claims?["exp"]?.intValue.map(Self.plausible)
    }

    /// The times believed: from the epoch to the end of year 9999. Anyone who can write the
    /// source chooses `exp`; a value out of this range (`Int64.min`) is clamped into it, so no
    /// arithmetic on it can overflow.
    public static let plausibleTimes: ClosedRange<Int64> = 0...253_402_300_799

    /// `time` clamped into ``plausibleTimes``.
    public static func plausible(_ time: Int64) -> Int64 {
        min(max(time, plausibleTimes.lowerBound), plausibleTimes.upperBound)
    }

    /// The header and payload of a JWT, parsed without checking anything else.
    static func decoded(_ jwt: String) -> (header: JSONValue?, claims: JSONValue?) {
        let parts = jwt.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return (nil, nil) }
        let json = { (part: String.UTF8View.SubSequence) -> JSONValue? in
            guard let bytes = Base64URL.decode(String(Substring(part))) else { return nil }
            return try? JSONValue.parse(String(decoding: bytes, as: UTF8.self))
        }
        return (json(parts[0]), json(parts[1]))
    }

    /// How the assertion's life reads in an error at `now`: expired (the source gave no fresh
    /// one), or when it expires; empty when its expiry is unknown.
    public func lifeText(now: Int64) -> String {
        guard let expiresOn else { return "" }
        let now = Self.plausible(now)
        if expiresOn <= now { return " (it expired \(now - expiresOn) s ago and the source gave no fresh one)" }
        return " (it expires in \(expiresOn - now) s)"
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
