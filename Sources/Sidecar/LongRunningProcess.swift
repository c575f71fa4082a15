import TokenCache

/// What a process that serves for long (the agent, the stdio mode) turns on at start, before
/// any engine opens the cache.
public enum LongRunningProcess {
    /// The cache keys it holds are kept alive in the kernel keyring by a timer, not only
    /// before writes (``CacheKeyRenewal``): an idle agent still renews the keyring.
    public static func begin() { CacheKeyRenewal.runInBackground() }
}
