import AuthSeams

/// Decides what to do with a request that reached the loopback listener.
///
/// Two steps, because a redirect may arrive before the caller has named the expected
/// state: `prevalidate` checks everything but the state and extracts the parameters;
/// `decide` compares the state.
struct RedirectRequestEvaluator: Sendable {
    /// The redirect URI being served.
    var redirect: RedirectURI

    /// Outcome of `prevalidate`.
    enum Prevalidation: Equatable {
        /// Not an authorization response: answer and keep listening.
        case reject(HTTPReply, reason: String)
        /// The decoded parameters (query for GET, body plus query for POST).
        case parameters([String: String])
    }

    /// Outcome of `decide`.
    enum Decision: Equatable {
        /// Ignored (wrong or missing state): answer and keep listening.
        case reject(HTTPReply, reason: String)
        /// The response of this sign-in: answer, deliver, stop.
        case accept(AuthorizationResponse, HTTPReply)
    }

    /// Checks path, method, content type and parameter syntax (the server's
    /// ``RequestPolicy/browserRedirect`` has checked the Host).
    func prevalidate(_ request: HTTPServerRequest) -> Prevalidation {
        guard request.path == redirect.requestPath else {
            return .reject(RedirectPages.error(.notFound, message: "Not found."), reason: "path is not the redirect path")
        }
        var parameters: [String: String]
        do {
            parameters = try FormURLEncoding.decode(Substring(request.query))
            switch request.method {
            case "GET":
                break
            case "POST":
                let type = request.header("content-type")?.lowercased() ?? ""
                guard type.split(separator: ";").first?.trimmingSpaces() == "application/x-www-form-urlencoded" else {
                    return .reject(
                        RedirectPages.error(.unsupportedMediaType, message: "Expected a form post."),
                        reason: "POST without application/x-www-form-urlencoded")
                }
                guard let body = String(validating: request.body, as: UTF8.self) else {
                    throw FormURLEncoding.DecodingError.malformed
                }
                parameters.merge(try FormURLEncoding.decode(Substring(body))) { _, fromBody in fromBody }
            default:
                var reply = RedirectPages.error(.methodNotAllowed, message: "Only GET and POST are accepted.")
                reply.extraHeaders = [("Allow", "GET, POST")]
                return .reject(reply, reason: "method \(request.method) not allowed")
            }
        } catch {
            return .reject(
                RedirectPages.error(.badRequest, message: "Malformed or repeated parameters."),
                reason: "malformed or repeated parameters")
        }
        return .parameters(parameters)
    }

    /// Accepts the parameters only when their `state` equals `expectedState`.
    func decide(_ parameters: [String: String], expectedState: String) -> Decision {
        guard let state = parameters["state"], Self.constantTimeEquals(state, expectedState) else {
            let reason = parameters["state"] == nil ? "state missing" : "state mismatch"
            return .reject(RedirectPages.stateMismatch(), reason: reason)
        }
        let response = AuthorizationResponse(parameters: parameters)
        if let error = response.error {
            return .accept(
                response,
                RedirectPages.failure(
                    error: error, description: response.errorDescription, subcode: response.errorSubcode))
        }
        return .accept(response, RedirectPages.success())
    }

    /// Compares without an early exit, so timing does not reveal the matching prefix.
    static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        var difference = UInt8(truncatingIfNeeded: left.count ^ right.count)
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0 && left.count == right.count
    }
}
