extension SilentRequest {
    /// The key the token is bound to; `nil` for a bearer token.
    var binding: TokenBinding? { token.binding }
}

extension InteractiveRequest {
    /// The key the token is bound to; `nil` for a bearer token.
    var binding: TokenBinding? { token.binding }
}
