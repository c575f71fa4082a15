import AuthSeams

/// What the user pasted back after a paste-back sign-in, read as the authorization response:
/// the final `http://localhost…?code=…&state=…` address (or its `error=…` page), its query
/// alone, or the bare code. The one rule for that text; it never logs or quotes a code.
enum PastedAddress {
    /// The most characters a pasted address may have (a code is a few KB at most).
    static let limit = 16_384

    /// The response `text` carries, its `state` checked against `expectedState` when it has one.
    ///
    /// - Parameter redirectURI: the redirect URI the sign-in sent; an address must be on a
    ///   loopback host with its path (any port: a browser shows `http://localhost/?code=…` for
    ///   the default one).
    /// - Throws: ``AuthError/Kind/pastedAddressRefused`` (not the sign-in's address, no code and
    ///   no error, unreadable), ``AuthError/Kind/pastedStateMismatch`` (another sign-in's
    ///   address, or one changed on the way).
    static func response(_ text: String, redirectURI: String, expectedState: String) throws(AuthError) -> AuthorizationResponse {
        let pasted = trimmed(text)
        guard !pasted.isEmpty else { throw refused("nothing was pasted") }
        guard pasted.count <= limit else { throw refused("the pasted text is longer than \(limit) characters") }
        let parameters: [String: String]
        if let scheme = ["http://", "https://"].first(where: { pasted.lowercased().hasPrefix($0) }) {
            guard scheme == "http://", isRedirect(pasted, of: redirectURI) else {
                throw refused(
                    "the pasted address is not where the sign-in ended (it starts with \(redirectHint(redirectURI))); "
                        + "after signing in, copy the whole address from the browser's address bar")
            }
            parameters = try decoded(pasted)
        } else if pasted.hasPrefix("?") || pasted.contains("code=") || pasted.contains("error=") {
            parameters = try decoded("?" + pasted.drop { $0 == "?" })
        } else {
            guard pasted.allSatisfy(Self.isCodeCharacter) else {
                throw refused("the pasted text is neither the address the sign-in ended on nor a code")
            }
            return AuthorizationResponse(parameters: ["code": pasted])
        }
        let response = AuthorizationResponse(parameters: parameters)
        if let state = response.state, state != expectedState {
            throw AuthError(
                .pastedStateMismatch,
                "the pasted address belongs to another sign-in (its state is not this sign-in's); "
                    + "paste the address this sign-in's URL ended on")
        }
        if response.error != nil { return response }
        guard let code = response.code, !code.isEmpty else {
            throw refused("the pasted address carries no code and no error; copy the whole address after signing in")
        }
        guard response.state != nil else {
            throw refused("the pasted address carries no state, so it cannot be checked; paste the whole address (or just the code)")
        }
        return response
    }

    /// The error for a code the service would not redeem with this sign-in's verifier
    /// (AADSTS501481), or whose ID token carries another nonce: a code of another sign-in.
    static func fromAnotherSignIn(_ error: AuthError) -> AuthError? {
        let verifierRefused = OAuthErrorAnswer(error).has(serviceCode: 501481)
        let otherNonce = error.kind == .malformedResponse && error.message.contains("nonce")
        guard verifierRefused || otherNonce else { return nil }
        var other = error
        other.kind = .pastedCodeFromAnotherSignIn
        other.message =
            "the pasted code was issued to another sign-in ("
            + (verifierRefused ? "the service refused this sign-in's PKCE verifier for it" : "its ID token carries another nonce")
            + "); sign in again and paste the address this sign-in's URL ends on"
        return other
    }

    private static func refused(_ why: String) -> AuthError { AuthError(.pastedAddressRefused, why) }

    /// `text` without surrounding white space, and without one pair of quotes or angle brackets
    /// around it (as a terminal or a mail client may add).
    static func trimmed(_ text: String) -> String {
        var result = Substring(text).trimmingWhitespace()
        for (open, close) in [("\"", "\""), ("'", "'"), ("<", ">")] where result.count >= 2 {
            if result.hasPrefix(open), result.hasSuffix(close) { result = result.dropFirst().dropLast().trimmingWhitespace() }
        }
        return String(result)
    }

    /// The query's parameters (else the fragment's, for a `response_mode=fragment` answer).
    private static func decoded(_ address: String) throws(AuthError) -> [String: String] {
        let beforeFragment = address.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let query = beforeFragment[0].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().first ?? ""
        do throws(FormURLEncoding.DecodingError) {
            let parameters = try FormURLEncoding.decode(query)
            if parameters["code"] == nil, parameters["error"] == nil, beforeFragment.count == 2 {
                return try FormURLEncoding.decode(beforeFragment[1])
            }
            return parameters
        } catch {
            throw refused("the pasted address cannot be read (\(error == .malformed ? "a malformed %-escape or not UTF-8" : "a parameter repeats"))")
        }
    }

    /// Whether `address` (`http://…`) is on a loopback host with the redirect URI's path.
    static func isRedirect(_ address: String, of redirectURI: String) -> Bool {
        let rest = address.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let path = rest.dropFirst(authority.count).prefix { $0 != "?" && $0 != "#" }
        var host = authority
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") { host = authority[..<colon] }
        guard ["localhost", "127.0.0.1", "[::1]"].contains(host.lowercased()) else { return false }
        let expected = (try? RedirectURI(parsing: redirectURI))?.requestPath ?? "/"
        return (path.isEmpty ? "/" : String(path)) == expected
    }

    private static func redirectHint(_ redirectURI: String) -> String {
        (try? RedirectURI(parsing: redirectURI)).map { "http://\($0.host)\($0.path)" } ?? redirectURI
    }

    /// The characters of an authorization code (base64url, dots, and the few others services use).
    private static func isCodeCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "-._~+/=!*".contains(character))
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
