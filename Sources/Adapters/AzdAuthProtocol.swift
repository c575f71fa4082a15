import JSON

/// azd's external authentication (api-version 2023-07-12-preview), as azd's
/// `RemoteCredential` sends it when `AZD_AUTH_ENDPOINT` and `AZD_AUTH_KEY` are set
/// (Azure/azure-dev `cli/azd/pkg/auth/remote_credential.go`, served by the VS Code extension's
/// `ext/vscode/src/utils/authServer.ts`):
/// `POST {endpoint}/token?api-version=2023-07-12-preview` with `Content-Type: application/json`,
/// `Authorization: Bearer {key}` and `{"scopes": [...], "tenantId"?: "..."}`. A token, or a
/// failure to get one, is a 200 with `{"status": "success", "token", "expiresOn"}` (RFC 3339)
/// or `{"status": "error", "code", "message"}` (`NotSignedInError` or `GetTokenError`); any
/// other status is a refused request.
///
/// `claims` (a claims challenge's JSON) is this endpoint's addition for the open item of
/// azd's protocol (CAE and claims): the token is acquired for those claims.
public enum AzdAuthProtocol {
    public static let path = "/token"
    public static let apiVersion = "2023-07-12-preview"
    /// The most scopes one request may name, and the longest scope.
    static let maxScopes = 32
    static let maxScopeLength = 2048

    /// What a request asks for.
    public struct TokenRequest: Sendable, Equatable {
        public let scopes: [String]
        public let tenantId: String?
        public let claims: String?
    }

    /// An answer on the wire: status and JSON body.
    public struct Reply: Sendable, Equatable {
        public let status: Int
        public let body: JSONValue

        /// A refused request (no token was asked for): the status, and why in the error shape.
        public static func refused(_ status: Int, _ message: String) -> Reply {
            Reply(status: status, body: ["status": "error", "code": "BadRequest", "message": .string(message)])
        }

        /// The token.
        public static func token(_ token: String, expiresOn: Int64) -> Reply {
            Reply(status: 200, body: ["status": "success", "token": .string(token), "expiresOn": .string(TimeText.rfc3339(expiresOn))])
        }

        /// No token: a 200 azd reads as the `GetToken` error (`signInNeeded`: `NotSignedInError`).
        public static func failure(signInNeeded: Bool, _ message: String) -> Reply {
            Reply(
                status: 200,
                body: [
                    "status": "error", "code": .string(signInNeeded ? "NotSignedInError" : "GetTokenError"), "message": .string(message),
                ])
        }
    }

    /// Checks a request: path, method, key (compared in constant time), api-version,
    /// content type, then the body. Either what to fetch or the reply to send at once.
    public static func evaluate(
        method: String, path requestPath: String, query: String, headers: [String: String], body: [UInt8], key: String
    ) -> Result<TokenRequest, AzdReplyError> {
        guard requestPath == path else { return .failure(.init(.refused(404, "not found: use POST \(path)"))) }
        guard method == "POST" else { return .failure(.init(.refused(405, "only POST is served"))) }
        guard let authorization = headers["authorization"], authorization.hasPrefix("Bearer "),
            ManagedIdentityProtocol.constantTimeEqual(String(authorization.dropFirst(7)), key)
        else {
            return .failure(.init(.refused(401, "missing or wrong Authorization: Bearer AZD_AUTH_KEY")))
        }
        guard query == "api-version=\(apiVersion)" else {
            return .failure(.init(.refused(400, "the query must be api-version=\(apiVersion)")))
        }
        let mediaType = headers["content-type"]?.split(separator: ";").first.map { String($0).trimmingSpaces.lowercased() }
        guard mediaType == "application/json" else { return .failure(.init(.refused(400, "Content-Type must be application/json"))) }
        return parseBody(body)
    }

    private static func parseBody(_ body: [UInt8]) -> Result<TokenRequest, AzdReplyError> {
        guard let value = try? JSONValue.parse(body), let object = value.objectValue else {
            return .failure(bad("the body is not a JSON object"))
        }
        guard let list = object["scopes"]?.arrayValue, !list.isEmpty, list.count <= maxScopes else {
            return .failure(bad("scopes must be a list of 1 to \(maxScopes) strings"))
        }
        let scopes = list.compactMap(\.stringValue)
        guard scopes.count == list.count, scopes.allSatisfy({ !$0.isEmpty && $0.utf8.count <= maxScopeLength }) else {
            return .failure(bad("scopes must be non-empty strings"))
        }
        var tenantId: String?
        if let tenant = object["tenantId"], !tenant.isNull {
            guard let text = tenant.stringValue else { return .failure(bad("tenantId must be a string")) }
            tenantId = text.isEmpty ? nil : text
        }
        var claims: String?
        if let value = object["claims"], !value.isNull {
            guard let text = value.stringValue else { return .failure(bad("claims must be a string")) }
            if !text.isEmpty {
                guard let json = ClaimsChallenge.claims(fromChallenge: text) else {
                    return .failure(bad("claims must be a claims JSON object, or base64 of one"))
                }
                claims = json
            }
        }
        return .success(TokenRequest(scopes: scopes, tenantId: tenantId, claims: claims))
    }

    private static func bad(_ message: String) -> AzdReplyError { AzdReplyError(.refused(400, message)) }

    /// A new `AZD_AUTH_KEY`: 32 random bytes as hex (as the VS Code extension makes it).
    public static func newKey() -> String { ManagedIdentityProtocol.newSecret() }
}

/// A reply decided before any token is fetched.
public struct AzdReplyError: Error, Sendable, Equatable {
    public let reply: AzdAuthProtocol.Reply
    public init(_ reply: AzdAuthProtocol.Reply) { self.reply = reply }
}
