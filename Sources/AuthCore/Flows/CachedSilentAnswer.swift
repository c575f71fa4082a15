/// A silent request's answer found in memory, without waiting: a token the same request shape
/// found in the same version of the cache, still valid for 5 minutes
/// (``PublicClientApplication/cachedSilentAnswer(_:)``).
public struct CachedSilentAnswer: Sendable {
    /// The same for every answer of this request shape from this version of the cache: what
    /// `result` makes differs only in the correlation id.
    public let identity: Identity
    /// The result, for a correlation id.
    public let result: @Sendable (String) -> TokenResult

    public struct Identity: Sendable, Hashable {
        /// The cache document's stamp.
        public let stamp: UInt64
        let key: String
    }
}
