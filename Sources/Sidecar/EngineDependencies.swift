import AuthCore

/// What an engine is built on, as the door's composition root made it from the configuration
/// (`Composition`'s `ApplicationFactory.live`, or a test's fakes): the auth core's dependencies
/// behind their seams, and how the file cache is protected.
public struct EngineDependencies: Sendable {
    /// The flows' HTTP client, cache, clock, browser, redirect listener and broker.
    public var auth: AuthDependencies
    /// What protects the file cache (`nil`: a memory cache, or test dependencies).
    public var cacheProtection: CacheProtectionReport?

    public init(_ auth: AuthDependencies, cacheProtection: CacheProtectionReport? = nil) {
        self.auth = auth
        self.cacheProtection = cacheProtection
    }
}
