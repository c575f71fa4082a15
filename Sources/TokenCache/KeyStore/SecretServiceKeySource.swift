/// Layer 1, the Secret Service (libsecret over D-Bus): **not built in this version**; it
/// always reports so, and `auto` goes on to the kernel keyring.
public struct SecretServiceKeySource: CacheKeySource {
    public let layer = CacheKeyLayer.secretService

    public init() {}

    public func obtainKey() -> CacheKeyOutcome {
        .unavailable(reason: "not built in this version", enable: "(not available yet)")
    }
}
