import AuthSeams
import FoundationEssentials
import JSON

/// What a signed HTTP request (SHR) is for: the resource request it authorizes, or (kubelogin's
/// Azure Arc shape) a resource named by its id, for every request to it.
public struct PopRequestTarget: Sendable, Equatable {
    /// The HTTP method, upper-cased (`m`); empty for a resource id.
    public let method: String
    /// The resource URL (its host and port `u`, path `p`, query `q`); empty for a resource id.
    public let url: String
    /// The resource's id, the SHR's `u` without `m`, `p` or `q` (kubelogin's PoP token for Azure
    /// Arc: `u` the cluster's ARM id; the token serves every request kubectl makes).
    public let resourceId: String?
    /// The resource's nonce (`WWW-Authenticate: PoP nonce="…"`), when it gave one.
    public let nonce: String?
    /// `client_claims`, passed as they are (kubelogin's `u=<ARM id>` for Azure Arc).
    public let clientClaims: String?

    /// Refuses a method that is not an HTTP token and a URL that is not absolute http(s).
    public init(method: String, url: String, nonce: String? = nil, clientClaims: String? = nil) throws(PopTargetError) {
        guard !method.isEmpty, method.utf8.count <= 32,
            method.utf8.allSatisfy({ (0x21...0x7e).contains($0) && !"()<>@,;:\\\"/[]?={}".utf8.contains($0) })
        else { throw .method }
        guard let parts = URLParts(url), parts.scheme == "https" || parts.isLoopback else { throw .url }
        self.method = method.uppercased()
        self.url = url
        self.nonce = nonce
        self.clientClaims = clientClaims
        self.parts = parts
        resourceId = nil
    }

    /// A resource named by its id (kubelogin's `--pop-claims u=<ARM id>`): printable ASCII, no space.
    public init(resourceId: String, nonce: String? = nil, clientClaims: String? = nil) throws(PopTargetError) {
        guard !resourceId.isEmpty, resourceId.utf8.count <= 2048, resourceId.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
            throw .resourceId
        }
        method = ""
        url = ""
        self.resourceId = resourceId
        self.nonce = nonce
        self.clientClaims = clientClaims
        parts = nil
    }

    private let parts: URLParts?

    /// `u`: the host, and the port when the URL names one other than its scheme's default
    /// (the request's `Host` header).
    public var hostAndPort: String {
        guard let parts else { return resourceId ?? "" }
        let host = parts.host.contains(":") ? "[\(parts.host)]" : parts.host
        let standard = parts.scheme == "https" ? 443 : 80
        guard let port = parts.port, port != standard else { return host }
        return host + ":" + String(port)
    }

    /// `p` and the query (`nil` when there is none), the fragment dropped.
    var pathAndQuery: (path: String, query: String?) {
        guard let parts else { return ("", nil) }
        var rest = Substring(parts.path)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let path: Substring
        var query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            path = rest[..<mark]
            query = rest[rest.index(after: mark)...]
        } else {
            path = rest
        }
        return (path.isEmpty ? "/" : String(path), query.flatMap { $0.isEmpty ? nil : String($0) })
    }
}

/// A method or URL an SHR cannot be made for.
public enum PopTargetError: Error, Sendable, Equatable, CustomStringConvertible {
    case method
    case url
    case resourceId

    public var description: String {
        switch self {
        case .resourceId: "the proof-of-possession resourceId must be printable ASCII without spaces (an ARM id), at most 2048 bytes"
        case .method: "the proof-of-possession method must be an HTTP method (GET, POST, …)"
        case .url: "the proof-of-possession url must be an absolute https URL (http only to a loopback host)"
        }
    }
}

/// The signed HTTP request (draft-ietf-oauth-signed-http-request) as msal-common's
/// PopTokenGenerator makes it: a JWS, header `{"alg":"RS256","kid":<thumbprint>,"typ":"pop"}`,
/// payload `{at, ts, m, u, p, q?, nonce, client_claims?, cnf: {jwk}}` (a random nonce when the
/// resource gave none, as msal-common does), signed with the PoP key; for a resource id,
/// kubelogin's `{at, ts, u, nonce, client_claims?, cnf}`.
public enum SignedHttpRequest {
    /// The SHR for `target` carrying the PoP access token `accessToken`, made at `now` (seconds).
    public static func make(accessToken: String, target: PopRequestTarget, key: PopSigningKey, now: Int64) throws -> String {
        let (path, query) = target.pathAndQuery
        var payload: JSONObject = [
            "at": .string(accessToken), "ts": .int(now), "u": .string(target.hostAndPort),
            "nonce": .string(target.nonce ?? UUID().uuidString.lowercased()),
        ]
        // A resource id (kubelogin's Azure Arc shape) names no method or path: every request.
        if target.resourceId == nil {
            payload["m"] = .string(target.method)
            payload["p"] = .string(path)
        }
        if let query { payload["q"] = [[], .string(query)] }
        if let claims = target.clientClaims { payload["client_claims"] = .string(claims) }
        payload["cnf"] = ["jwk": key.publicJWK]
        let header: JSONValue = ["alg": "RS256", "kid": .string(key.keyId), "typ": "pop"]
        let signingInput = Base64URL.encode(header.serialized()) + "." + Base64URL.encode(JSONValue.object(payload).serialized())
        return signingInput + "." + Base64URL.encode(try key.sign(Array(signingInput.utf8)))
    }

    /// The `Authorization` header value: `PoP <SHR>`.
    public static func authorizationHeader(_ shr: String) -> String { "PoP " + shr }
}
