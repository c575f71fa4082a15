import AuthCore
import JSON
import JSONRPC

/// The proof-of-possession parameters: `proofOfPossession: {method, url, nonce?, clientClaims?}`
/// of `acquireToken`/`acquireTokenSilent`, the same members at the top of `signHttpRequest`, and
/// what a PoP result adds (`signedHttpRequest`, `authorizationHeader`).
enum PopParams {
    /// The members of a resource request.
    static let targetMembers: Set<String> = ["method", "url", "resourceId", "nonce", "clientClaims"]
    /// `signHttpRequest`'s members.
    static let signMembers: Set<String> = targetMembers.union(["scopes", "account", "correlationId"])

    /// The target of `proofOfPossession`, if the request has one (an `sshCertificate` beside it
    /// is refused: one token kind per request).
    static func target(_ p: Params) throws(RPCError) -> PopRequestTarget? {
        guard let nested = try p.nested("proofOfPossession", allowed: targetMembers) else { return nil }
        if p.members["sshCertificate"].map({ !$0.isNull }) == true {
            throw .invalidParams("'proofOfPossession' and 'sshCertificate' ask for two kinds of token; ask for one", member: "proofOfPossession")
        }
        return try target(of: nested, prefix: "proofOfPossession.")
    }

    /// The target named by `p`'s `method`, `url`, `nonce` and `clientClaims`.
    static func target(of p: Params, prefix: String = "") throws(RPCError) -> PopRequestTarget {
        let nonce: String? = try p.optional("nonce")
        let clientClaims: String? = try p.optional("clientClaims")
        for (name, value) in [("nonce", nonce), ("clientClaims", clientClaims)] where value?.isEmpty == true {
            throw .invalidParams("'\(prefix)\(name)' must not be empty", member: prefix + name)
        }
        if let resourceId: String = try p.optional("resourceId") {
            if let other = ["method", "url"].first(where: { p.members[$0].map { !$0.isNull } == true }) {
                throw .invalidParams("'\(prefix)resourceId' names the resource for every request: give it without '\(other)'", member: prefix + other)
            }
            do {
                return try PopRequestTarget(resourceId: resourceId, nonce: nonce, clientClaims: clientClaims)
            } catch {
                throw .invalidParams("'\(prefix)resourceId': \(error.description)", member: prefix + "resourceId")
            }
        }
        let method: String = try p.required("method")
        let url: String = try p.required("url")
        do {
            return try PopRequestTarget(method: method, url: url, nonce: nonce, clientClaims: clientClaims)
        } catch {
            let member = prefix + (error == .method ? "method" : "url")
            throw .invalidParams("'\(member)': \(error.description)", member: member)
        }
    }

    /// The result of a token request: with a target, a fresh SHR for it and the header value.
    static func tokenResult(_ result: TokenResult, target: PopRequestTarget?, app: PublicClientApplication) throws -> JSONValue {
        guard let target else { return AuthJSON.tokenResult(result) }
        // Never an SHR around another kind of token (a backend that ignored the binding).
        guard result.tokenType.lowercased() == PopBinding.tokenType else {
            throw AuthError(.malformedResponse, "a proof-of-possession request was answered a \(result.tokenType.prefix(16)) token")
        }
        guard case .object(var object) = AuthJSON.tokenResult(result) else { return AuthJSON.tokenResult(result) }
        let shr = try signed(result, target: target, app: app)
        object["signedHttpRequest"] = .string(shr)
        object["authorizationHeader"] = .string(SignedHttpRequest.authorizationHeader(shr))
        return .object(object)
    }

    /// The SHR of a PoP result: the broker's (it holds its key), else signed now with the cache's key.
    static func signed(_ result: TokenResult, target: PopRequestTarget, app: PublicClientApplication) throws -> String {
        if let shr = result.signedHttpRequest { return shr }
        return try app.signedHttpRequest(accessToken: result.accessToken, target: target)
    }
}
