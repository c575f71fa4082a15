/// An authority ready for use: trusted, with its endpoints and the host names its tokens
/// may be cached under.
public struct ResolvedAuthority: Sendable {
    public let authority: Authority
    public let metadata: OpenIDMetadata
    /// The authority's host and its aliases (instance discovery), lower-cased.
    public let environments: [String]
    /// The cache realm for tokens from this authority.
    public var realm: String { metadata.realm ?? authority.tenant }
}
