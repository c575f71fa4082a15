import POSIXSupport
import TokenCache

/// Holds the cache's proof-of-possession key: loaded (or made and stored) once, on first use.
/// With an encrypted cache the key lives in ``PopKeyFile``, sealed under the cache's key, so
/// every process of the cache signs with it. A plaintext cache keeps no key on disk (it is never
/// written in plaintext): this process makes one of its own, and a PoP token bound to another
/// process's key is not found in the cache (its key id differs) and is asked for again.
public final class PopKeyHolder: Sendable {
    private let file: PopKeyFile?
    private let held = PthreadMutex<PopSigningKey?>(nil)

    /// - Parameter file: where the key is kept; `nil` for a plaintext cache (a key per process).
    public init(file: PopKeyFile?) {
        self.file = file
    }

    /// Whether the key outlives this process.
    public var isPersistent: Bool { file != nil }

    /// The key (made on first use).
    public func key() throws -> PopSigningKey {
        try held.withLock { (held: inout PopSigningKey?) throws -> PopSigningKey in
            if let held { return held }
            let key: PopSigningKey
            if let file {
                key = try PopSigningKey(derRepresentation: try file.loadOrCreate { try PopSigningKey.generate().derRepresentation })
            } else {
                key = try PopSigningKey.generate()
            }
            held = key
            return key
        }
    }
}
