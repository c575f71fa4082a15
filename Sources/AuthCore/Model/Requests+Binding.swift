extension SilentRequest {
    /// The key the token is bound to; `nil` for a bearer token.
    var binding: TokenBinding? { sshKey.map(TokenBinding.sshCertificate) ?? popKey.map(TokenBinding.proofOfPossession) }
}

extension InteractiveRequest {
    /// The key the token is bound to; `nil` for a bearer token.
    var binding: TokenBinding? { sshKey.map(TokenBinding.sshCertificate) ?? popKey.map(TokenBinding.proofOfPossession) }
}
